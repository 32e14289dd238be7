/*
 * viewer._layout: the row layout's prefix sums, in C (optional).
 *
 * A `viewer.document.Document` keeps one row count a block (an array('i')) and
 * their prefix sums (an array('q'), one longer): row N is found by bisecting
 * the sums. Every chunk of counts a layout worker posts is taken in on the UI
 * thread, and so is every change of a laid-out block's count, which moves the
 * sums of every block after it. In Python (`itertools.accumulate` into a new
 * array) that is about 0.1 us a block: a chunk of 65,536 counts held the UI
 * thread 13 ms on the development machine, and twice that while the pass
 * server's processes had both cores, which a key pressed meanwhile waited
 * for. Here it is a loop over the two arrays' own buffers.
 *
 * Only the arithmetic is here: which sums to refill, and when, is decided by
 * the `Document` (`viewer/document.py`, which runs the same in Python where
 * this was not built; the tests hold both to each other).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>

/* Take a buffer of one-letter `format` items of `itemsize` bytes (an array's), or fail. */
static int
typed_buffer(PyObject *obj, Py_buffer *view, int flags, const char *format, Py_ssize_t itemsize,
             const char *what)
{
    if (PyObject_GetBuffer(obj, view, flags | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        return -1;
    }
    if (view->itemsize != itemsize || view->format == NULL || strcmp(view->format, format) != 0) {
        PyErr_Format(PyExc_TypeError, "%s must be an array('%s')", what, format);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(prefix_sums_doc,
             "prefix_sums(starts, counts, first, /)\n"
             "--\n\n"
             "Refill starts[first + 1:] so that starts[k + 1] == starts[k] + counts[k] for\n"
             "every k >= first. `starts` is an array('q') one longer than `counts`, an\n"
             "array('i'); 0 <= first <= len(counts). Raises OverflowError, and changes\n"
             "nothing, if a sum would not fit in 64 bits.");

static PyObject *
prefix_sums(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "prefix_sums() takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    Py_ssize_t first = PyLong_AsSsize_t(args[2]);
    if (first == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_buffer starts, counts;
    if (typed_buffer(args[0], &starts, PyBUF_WRITABLE, "q", 8, "starts") < 0) {
        return NULL;
    }
    if (typed_buffer(args[1], &counts, PyBUF_SIMPLE, "i", 4, "counts") < 0) {
        PyBuffer_Release(&starts);
        return NULL;
    }
    Py_ssize_t n = counts.len / 4;
    PyObject *result = NULL;
    if (starts.len / 8 != n + 1) {
        PyErr_Format(PyExc_ValueError, "starts has %zd sums for %zd counts (it needs one more)",
                     starts.len / 8, n);
    }
    else if (first < 0 || first > n) {
        PyErr_Format(PyExc_IndexError, "first %zd is outside 0..%zd", first, n);
    }
    else {
        int64_t *sum = (int64_t *)starts.buf;
        const int32_t *count = (const int32_t *)counts.buf;
        /* Checked before any sum is written: a failure leaves the array as it was. */
        int64_t acc = sum[first];
        Py_ssize_t k;
        for (k = first; k < n; k++) {
            if (__builtin_add_overflow(acc, (int64_t)count[k], &acc)) {
                break;
            }
        }
        if (k < n) {
            PyErr_SetString(PyExc_OverflowError, "a prefix sum of the row counts overflows");
        }
        else {
            acc = sum[first];
            for (k = first; k < n; k++) {
                acc += count[k];
                sum[k + 1] = acc;
            }
            result = Py_NewRef(Py_None);
        }
    }
    PyBuffer_Release(&counts);
    PyBuffer_Release(&starts);
    return result;
}

static PyMethodDef layout_methods[] = {
    {"prefix_sums", (PyCFunction)(void (*)(void))prefix_sums, METH_FASTCALL, prefix_sums_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef layout_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "transcript_view.viewer._layout",
    .m_doc = "The row layout's prefix sums (viewer/document.py).",
    .m_size = -1,
    .m_methods = layout_methods,
};

PyMODINIT_FUNC
PyInit__layout(void)
{
    return PyModule_Create(&layout_module);
}
