/*
 * core._lines: where each line of a buffer starts, found with memchr and the GIL
 * released (an optional accelerator for `core.transcript`'s line index).
 *
 * Indexing a transcript is finding its line feeds. In Python that is one
 * `bytes.find` call per line, about 0.7 us each: two seconds of a 1 GiB
 * transcript's 2.6 M lines, all of it holding the GIL, which in the viewer is
 * the UI's. memchr finds them at memory speed, and the GIL is released while it
 * does, so the UI thread keeps answering keys. The pure-Python loop in
 * core/transcript.py gives the same offsets and is used where this did not
 * build.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

PyDoc_STRVAR(line_starts_doc,
"line_starts(buffer, base, /)\n"
"--\n"
"\n"
"The offsets of the bytes after each LF in `buffer`, as native int64 bytes\n"
"(for array('q').frombytes): base + i + 1 for every LF at index i.");

static Py_ssize_t
count_lf(const char *data, Py_ssize_t size)
{
    Py_ssize_t n = 0;
    const char *p = data, *end = data + size;
    while (p < end) {
        const char *lf = memchr(p, '\n', (size_t)(end - p));
        if (lf == NULL) {
            break;
        }
        n++;
        p = lf + 1;
    }
    return n;
}

/* At most `room` starts: a buffer that is not bytes may change between the
 * count and the fill (the GIL is released for both), and the fill must never
 * write past what the count made room for. Returns how many were written. */
static Py_ssize_t
fill_starts(const char *data, Py_ssize_t size, int64_t base, int64_t *out, Py_ssize_t room)
{
    const char *p = data, *end = data + size;
    Py_ssize_t n = 0;
    while (p < end && n < room) {
        const char *lf = memchr(p, '\n', (size_t)(end - p));
        if (lf == NULL) {
            break;
        }
        out[n++] = base + (int64_t)(lf - data) + 1;
        p = lf + 1;
    }
    return n;
}

static PyObject *
line_starts(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "line_starts(buffer, base) takes 2 arguments");
        return NULL;
    }
    long long base = PyLong_AsLongLong(args[1]);
    if (base == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    Py_ssize_t n;
    Py_BEGIN_ALLOW_THREADS
    n = count_lf((const char *)view.buf, view.len);
    Py_END_ALLOW_THREADS
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    int64_t *starts = (int64_t *)PyBytes_AS_STRING(out);
    Py_ssize_t filled;
    Py_BEGIN_ALLOW_THREADS
    filled = fill_starts((const char *)view.buf, view.len, (int64_t)base, starts, n);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (filled < n && _PyBytes_Resize(&out, filled * (Py_ssize_t)sizeof(int64_t)) < 0) {
        return NULL;  /* LFs went away meanwhile: never hand back unwritten bytes */
    }
    return out;
}

static PyMethodDef lines_methods[] = {
    {"line_starts", (PyCFunction)(void (*)(void))line_starts, METH_FASTCALL, line_starts_doc},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot lines_slots[] = {
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_mod_gil
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef lines_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "core._lines",
    .m_doc = "Line starts found with memchr, the GIL released (an optional accelerator).",
    .m_size = 0,
    .m_methods = lines_methods,
    .m_slots = lines_slots,
};

PyMODINIT_FUNC
PyInit__lines(void)
{
    return PyModuleDef_Init(&lines_module);
}
