/*
 * core._gcount: run a grapheme-boundary automaton over a str without the GIL.
 *
 * Why this exists: `settle()` of a 10 MB mixed-script tool result must cost at
 * most a few times a sha256 of it, and the pure-Python count (regex packing plus
 * wcwidth's segmenter) needs about 70 ms for that, all under the GIL. Counting
 * with a table-driven automaton takes a couple of nanoseconds a code point, and
 * with the GIL released the hash and the artifact write run beside it.
 *
 * It knows nothing about Unicode: `core.graphemes` derives the class tables
 * from wcwidth's (the same source the pure-Python path uses) and the automaton
 * from the UAX #29 rules written once in Python (`_native_tables` there), and
 * passes them in. The tests hold the two paths to each other and to
 * GraphemeBreakTest-18.0.0.
 *
 * This module is optional: when it cannot be built, `core.graphemes` counts in
 * pure Python and gives the same answers.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* Two-stage class table: stage1[cp >> BLOCK_SHIFT] is a block number, stage2
 * holds BLOCK_SIZE class bytes per block. */
#define BLOCK_SHIFT 7
#define BLOCK_SIZE (1 << BLOCK_SHIFT)
#define STAGE1_LEN (0x110000 >> BLOCK_SHIFT)

/* Strings shorter than this are counted with the GIL held: releasing and
 * taking it back costs more than counting them. */
#define RELEASE_GIL_AT 65536

/* The loop: look up the code point's class, take the transition, add its
 * boundary bit. A state is stored premultiplied by the number of classes, so
 * one addition finds its row; the start state is 0.
 *
 * Most text is runs of printable ASCII (a log with one accented word is still
 * a Latin-1 str, an emoji makes it UCS-4). In `plain`, the state after such a
 * character, another one is a boundary and leaves the state as it was
 * (`plain_state` checked that on these very tables), so a run is skipped with
 * one comparison a code point instead of a dependent chain of table reads. */
#define PLAIN_LO 0x20u
#define PLAIN_SPAN 0x5Fu /* U+0020..U+007E */
#define NO_PLAIN UINT32_MAX
#define DEFINE_COUNT(NAME, TYPE)                                              \
    static Py_ssize_t                                                         \
    NAME(const TYPE *text, Py_ssize_t n, const uint16_t *stage1,              \
         const uint8_t *stage2, const uint16_t *moves, uint32_t plain)        \
    {                                                                         \
        Py_ssize_t breaks = 0;                                                \
        unsigned int state = 0;                                               \
        Py_ssize_t i = 0;                                                     \
        while (i < n) {                                                       \
            if (state == plain) {                                             \
                Py_ssize_t j = i;                                             \
                while (j < n && (uint32_t)text[j] - PLAIN_LO < PLAIN_SPAN) {  \
                    j++;                                                      \
                }                                                             \
                breaks += j - i;                                              \
                i = j;                                                        \
                if (i == n) {                                                 \
                    break;                                                    \
                }                                                             \
            }                                                                 \
            Py_UCS4 cp = text[i++];                                           \
            unsigned int cls = stage2[((size_t)stage1[cp >> BLOCK_SHIFT]      \
                                       << BLOCK_SHIFT) | (cp & (BLOCK_SIZE - 1))]; \
            unsigned int move = moves[state + cls];                           \
            breaks += move & 1;                                               \
            state = move >> 1;                                                \
        }                                                                     \
        return breaks;                                                        \
    }

DEFINE_COUNT(count_ucs1, Py_UCS1)
DEFINE_COUNT(count_ucs2, Py_UCS2)
DEFINE_COUNT(count_ucs4, Py_UCS4)

/* An automaton whose tables were checked once, when it was made. The tables
 * must be `bytes`: immutable, so nothing can change them after the check
 * (a bytearray or a writable memoryview could, even while the GIL is
 * released), and a bytes object's data is aligned for uint16_t. */
typedef struct {
    PyObject_HEAD
    PyObject *stage1;
    PyObject *stage2;
    PyObject *moves;
    Py_ssize_t classes;
    uint32_t plain; /* the state printable ASCII keeps (`plain_state`), or NO_PLAIN */
} Automaton;

/* Whether every index the loop can form from these tables is in bounds, so
 * that no table can make it read outside them. Sets ValueError if not. */
static int
tables_ok(PyObject *o1, PyObject *o2, PyObject *o3, Py_ssize_t classes)
{
    const uint16_t *stage1 = (const uint16_t *)PyBytes_AS_STRING(o1);
    const uint8_t *stage2 = (const uint8_t *)PyBytes_AS_STRING(o2);
    const uint16_t *moves = (const uint16_t *)PyBytes_AS_STRING(o3);
    Py_ssize_t len1 = PyBytes_GET_SIZE(o1);
    Py_ssize_t len2 = PyBytes_GET_SIZE(o2);
    Py_ssize_t len3 = PyBytes_GET_SIZE(o3);
    Py_ssize_t blocks = len2 / BLOCK_SIZE;
    Py_ssize_t nmoves = len3 / (Py_ssize_t)sizeof(uint16_t);

    if (len1 != (Py_ssize_t)(STAGE1_LEN * sizeof(uint16_t)) ||
        len2 % BLOCK_SIZE != 0 || len3 % (Py_ssize_t)sizeof(uint16_t) != 0 ||
        classes < 1 || classes > 256 || nmoves < classes || nmoves % classes != 0) {
        PyErr_SetString(PyExc_ValueError, "Automaton tables have the wrong size");
        return 0;
    }
    for (Py_ssize_t i = 0; i < STAGE1_LEN; i++) {
        if ((Py_ssize_t)stage1[i] >= blocks) {
            PyErr_SetString(PyExc_ValueError, "Automaton stage1 names a missing block");
            return 0;
        }
    }
    for (Py_ssize_t i = 0; i < len2; i++) {
        if ((Py_ssize_t)stage2[i] >= classes) {
            PyErr_SetString(PyExc_ValueError, "Automaton stage2 holds a class out of range");
            return 0;
        }
    }
    for (Py_ssize_t i = 0; i < nmoves; i++) {
        Py_ssize_t next = moves[i] >> 1;
        if (next % classes != 0 || next + classes > nmoves) {
            PyErr_SetString(PyExc_ValueError, "Automaton moves name a missing state");
            return 0;
        }
    }
    return 1;
}

/* The state a run of printable ASCII can be skipped in: the one the first of
 * them leads to from the start, when every one of them has the same class and
 * that class, read in that state, is a boundary back to it. Derived from the
 * tables, not assumed: other tables get NO_PLAIN, and the plain loop. */
static uint32_t
plain_state(const uint16_t *stage1, const uint8_t *stage2, const uint16_t *moves)
{
    unsigned int cls = 0;
    for (Py_UCS4 cp = PLAIN_LO; cp < PLAIN_LO + PLAIN_SPAN; cp++) {
        unsigned int c = stage2[((size_t)stage1[cp >> BLOCK_SHIFT] << BLOCK_SHIFT) |
                                (cp & (BLOCK_SIZE - 1))];
        if (cp == PLAIN_LO) {
            cls = c;
        }
        else if (c != cls) {
            return NO_PLAIN;
        }
    }
    unsigned int state = moves[cls] >> 1;
    if (moves[state + cls] != ((state << 1) | 1u)) {
        return NO_PLAIN;
    }
    return state;
}

static PyObject *
automaton_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"stage1", "stage2", "moves", "classes", NULL};
    PyObject *o1, *o2, *o3;
    Py_ssize_t classes;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "SSSn:Automaton", kwlist,
                                     &o1, &o2, &o3, &classes)) {
        return NULL;
    }
    if (!tables_ok(o1, o2, o3, classes)) {
        return NULL;
    }
    Automaton *self = (Automaton *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->stage1 = Py_NewRef(o1);
    self->stage2 = Py_NewRef(o2);
    self->moves = Py_NewRef(o3);
    self->classes = classes;
    self->plain = plain_state((const uint16_t *)PyBytes_AS_STRING(o1),
                              (const uint8_t *)PyBytes_AS_STRING(o2),
                              (const uint16_t *)PyBytes_AS_STRING(o3));
    return (PyObject *)self;
}

static void
automaton_dealloc(PyObject *op)
{
    Automaton *self = (Automaton *)op;
    PyTypeObject *type = Py_TYPE(op);
    Py_XDECREF(self->stage1);
    Py_XDECREF(self->stage2);
    Py_XDECREF(self->moves);
    type->tp_free(op);
    Py_DECREF(type);
}

PyDoc_STRVAR(count_doc,
"count(text, /)\n"
"--\n"
"\n"
"Number of code points of text before which the automaton marks a boundary.\n"
"The GIL is released while counting long strings.");

static PyObject *
automaton_count(PyObject *op, PyObject *text)
{
    Automaton *self = (Automaton *)op;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "count() argument must be str");
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) {
        return NULL;
    }
#endif
    const uint16_t *stage1 = (const uint16_t *)PyBytes_AS_STRING(self->stage1);
    const uint8_t *stage2 = (const uint8_t *)PyBytes_AS_STRING(self->stage2);
    const uint16_t *moves = (const uint16_t *)PyBytes_AS_STRING(self->moves);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t breaks = 0;
    PyThreadState *save = NULL;

    /* Releasing the GIL is safe: str is immutable, and we hold references to
     * the text and (through self) to the tables until we take it back. */
    Py_INCREF(text);
    Py_INCREF(op);
    if (n >= RELEASE_GIL_AT) {
        save = PyEval_SaveThread();
    }
    switch (kind) {
    case PyUnicode_1BYTE_KIND:
        breaks = count_ucs1((const Py_UCS1 *)data, n, stage1, stage2, moves, self->plain);
        break;
    case PyUnicode_2BYTE_KIND:
        breaks = count_ucs2((const Py_UCS2 *)data, n, stage1, stage2, moves, self->plain);
        break;
    default:
        breaks = count_ucs4((const Py_UCS4 *)data, n, stage1, stage2, moves, self->plain);
        break;
    }
    if (save != NULL) {
        PyEval_RestoreThread(save);
    }
    Py_DECREF(op);
    Py_DECREF(text);
    return PyLong_FromSsize_t(breaks);
}

static PyObject *
automaton_plain_runs(PyObject *op, void *closure)
{
    return PyBool_FromLong(((Automaton *)op)->plain != NO_PLAIN);
}

static PyGetSetDef automaton_getset[] = {
    {"plain_runs", automaton_plain_runs, NULL,
     "Whether runs of printable ASCII are skipped (the tables allow it).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef automaton_methods[] = {
    {"count", automaton_count, METH_O, count_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(automaton_doc,
"Automaton(stage1, stage2, moves, classes)\n"
"--\n"
"\n"
"A boundary automaton, its tables (bytes) checked once: stage1 holds a native uint16\n"
"block number per 128 code points, stage2 128 class bytes per block (each\n"
"below classes), and moves a native uint16 per (state, class): the next\n"
"state's row (state number times classes) shifted left once, plus 1 when\n"
"there is a boundary before the code point. State 0 is the start.");

/* CR LF pairs: the one thing an ASCII text's grapheme count needs (its length
 * less them). A plain loop over adjacent code units, which the compiler turns
 * into vector code; str.count("\r\n") took longer than hashing the text. */
#define CRLF_LOOP(T, p, n, out) \
    for (Py_ssize_t i = 1; i < (n); i++) { \
        (out) += (((const T *)(p))[i - 1] == '\r') & (((const T *)(p))[i] == '\n'); \
    }

PyDoc_STRVAR(crlf_pairs_doc,
"crlf_pairs(text, /)\n"
"--\n"
"\n"
"How many times CR LF occurs in text (text.count('\\r\\n')), the GIL released\n"
"while counting long strings.");

static PyObject *
crlf_pairs(PyObject *module, PyObject *text)
{
    (void)module;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "crlf_pairs() argument must be str");
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) {
        return NULL;
    }
#endif
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), pairs = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyThreadState *save = n >= RELEASE_GIL_AT ? PyEval_SaveThread() : NULL;
    if (kind == PyUnicode_1BYTE_KIND) {  /* str is immutable, and the caller holds it */
        CRLF_LOOP(Py_UCS1, data, n, pairs)
    } else if (kind == PyUnicode_2BYTE_KIND) {
        CRLF_LOOP(Py_UCS2, data, n, pairs)
    } else {
        CRLF_LOOP(Py_UCS4, data, n, pairs)
    }
    if (save != NULL) {
        PyEval_RestoreThread(save);
    }
    return PyLong_FromSsize_t(pairs);
}

static PyMethodDef gcount_functions[] = {
    {"crlf_pairs", crlf_pairs, METH_O, crlf_pairs_doc},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot automaton_slots[] = {
    {Py_tp_new, automaton_new},
    {Py_tp_dealloc, automaton_dealloc},
    {Py_tp_methods, automaton_methods},
    {Py_tp_getset, automaton_getset},
    {Py_tp_doc, (void *)automaton_doc},
    {0, NULL},
};

static PyType_Spec automaton_spec = {
    .name = "core._gcount.Automaton",
    .basicsize = sizeof(Automaton),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = automaton_slots,
};

static int
gcount_exec(PyObject *module)
{
    PyObject *type = PyType_FromModuleAndSpec(module, &automaton_spec, NULL);
    if (type == NULL) {
        return -1;
    }
    int rc = PyModule_AddObjectRef(module, "Automaton", type);
    Py_DECREF(type);
    return rc;
}

static PyModuleDef_Slot gcount_slots[] = {
    {Py_mod_exec, gcount_exec},
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_mod_gil
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef gcount_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "core._gcount",
    .m_doc = "Grapheme-boundary counting without the GIL (an optional accelerator).",
    .m_size = 0,
    .m_methods = gcount_functions,
    .m_slots = gcount_slots,
};

PyMODINIT_FUNC
PyInit__gcount(void)
{
    return PyModuleDef_Init(&gcount_module);
}
