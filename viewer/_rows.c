/*
 * viewer._rows: the file view's row count of a plain transcript line, in C (optional).
 *
 * The analysis pass calls its measure once a line (`core.analysis.Measure`), in
 * the worker processes that decode the lines; the viewer's measure counts the
 * line's rows in the file view (`viewer.line_rows.PlainRows`). Written in Python,
 * that call and its dictionary reads cost more per line than the pass itself
 * (about 4 us of a 1 GiB transcript's 2.6 M lines). This is the same count for
 * the lines almost every transcript is made of: a message, a tool call, a
 * dispatch or a settle whose texts are printable ASCII. Everything else (a
 * non-ASCII or multi-line text, a value that is not a string, a stored
 * artifact, another envelope type) it hands to the Python measure it was made
 * with, which counts every line; the tests hold both to the row builder.
 *
 * The widths, the collapse limits and the rows a collapsed piece shows come in
 * from Python (`PlainRows.spec`), which takes them from the builder's own
 * rules: nothing about how rows are drawn is decided here.
 */

#include "_rows.h"

#include <stddef.h>
#include <stdint.h>

/* The spec's fields, in the order `PlainRows.spec` gives them. */
enum {
    S_BIG,            /* a line of this many bytes or more is shown in part: UNKNOWN */
    S_BODY,           /* cells of a message's content rows */
    S_CALLS,          /* cells of a tool call's argument rows */
    S_ARGS,           /* cells of a dispatch's or a settle's rows */
    S_BODY_LIMIT,     /* rows of a content piece before it collapses */
    S_BODY_SHOWN,     /* rows a collapsed content piece shows */
    S_CALL_LIMIT,     /* likewise for a call's arguments */
    S_CALL_SHOWN,
    S_DISPATCH_LIMIT, /* a dispatch's arguments */
    S_DISPATCH_SHOWN,
    S_ERROR_LIMIT,    /* a settle's error */
    S_ERROR_SHOWN,
    S_REASON_LIMIT,   /* a settle's reason */
    S_REASON_SHOWN,
    S_FIELDS
};

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    long spec[S_FIELDS];
    PyObject *fallback;
} Counter;

static PyObject *k_content, *k_tool_calls, *k_function, *k_arguments, *k_error, *k_reason,
    *k_artifact, *k_elided;

/* Rows of `prefix` cells then text `s` cut every `width` cells, if `s` is printable ASCII. */
static long
text_rows(PyObject *s, Py_ssize_t prefix, long width)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(s) < 0) {
        return ERR;
    }
#endif
    if (!PyUnicode_IS_ASCII(s)) {
        return ASK;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    const Py_UCS1 *d = PyUnicode_1BYTE_DATA(s);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (d[i] < 0x20 || d[i] == 0x7f) {
            return ASK; /* a control, LF included: drawn as a glyph, or a new row */
        }
    }
    n += prefix;
    return n ? (long)((n - 1) / width + 1) : 1;
}

static long
message_rows(const long *spec, PyObject *p)
{
    int err = 0;
    long rows;
    PyObject *content = item(p, k_content, &err);
    if (err) {
        return ERR;
    }
    if (content == NULL || content == Py_None) {
        rows = 1; /* `field_text(None)`: one empty row */
    } else if (!PyUnicode_CheckExact(content)) {
        return ASK;
    } else {
        Py_ssize_t at = PyUnicode_Find(content, k_elided, 0, PY_SSIZE_T_MAX, 1);
        if (at == -2) {
            return ERR;
        }
        if (at >= 0) {
            return UNKNOWN; /* a marker: its rows depend on its badge */
        }
        rows = text_rows(content, 0, spec[S_BODY]);
        if (rows < 0) {
            return rows;
        }
    }
    rows = 1 + shown(rows, spec[S_BODY_LIMIT], spec[S_BODY_SHOWN]);
    PyObject *calls = item(p, k_tool_calls, &err);
    if (err) {
        return ERR;
    }
    if (calls == NULL || !PyList_Check(calls)) {
        return rows;
    }
    if (!PyList_CheckExact(calls)) {
        return ASK;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(calls); i++) {
        PyObject *call = PyList_GET_ITEM(calls, i);
        if (!PyDict_CheckExact(call)) {
            if (never_mapping(call) || PyBool_Check(call)) {
                continue; /* not a call */
            }
            return ASK;
        }
        long args = 1; /* no function, or no arguments: `field_text(None)` */
        PyObject *fn = item(call, k_function, &err);
        if (err) {
            return ERR;
        }
        if (fn != NULL && PyDict_CheckExact(fn)) {
            PyObject *a = item(fn, k_arguments, &err);
            if (err) {
                return ERR;
            }
            if (a != NULL && a != Py_None) {
                if (!PyUnicode_CheckExact(a)) {
                    return ASK;
                }
                args = text_rows(a, 0, spec[S_CALLS]);
                if (args < 0) {
                    return args;
                }
            }
        } else if (fn != NULL && !never_mapping(fn)) {
            return ASK;
        }
        rows += 1 + shown(args, spec[S_CALL_LIMIT], spec[S_CALL_SHOWN]);
    }
    return rows;
}

/* Rows a settle's optional text field adds (`error`, `reason`): 0 when it shows none. */
static long
settle_field(const long *spec, PyObject *p, PyObject *key, Py_ssize_t prefix, int limit_at)
{
    int err = 0;
    PyObject *v = item(p, key, &err);
    if (err) {
        return ERR;
    }
    if (v == NULL || !PyUnicode_Check(v)) {
        return 0; /* not a string: the builder shows nothing */
    }
    if (!PyUnicode_CheckExact(v)) {
        return ASK;
    }
    if (PyUnicode_GET_LENGTH(v) == 0) {
        return 0;
    }
    long rows = text_rows(v, prefix, spec[S_ARGS]);
    if (rows < 0) {
        return rows;
    }
    return shown(rows, spec[limit_at], spec[limit_at + 1]);
}

static long
settle_rows(const long *spec, PyObject *p)
{
    int err = 0;
    PyObject *art = item(p, k_artifact, &err);
    if (err) {
        return ERR;
    }
    if (art != NULL && !never_mapping(art) && !PyBool_Check(art)) {
        return ASK; /* a stored artifact's row is formatted in Python */
    }
    long error = settle_field(spec, p, k_error, 7, S_ERROR_LIMIT); /* "error: " */
    if (error < 0) {
        return error;
    }
    long reason = settle_field(spec, p, k_reason, 8, S_REASON_LIMIT); /* "reason: " */
    if (reason < 0) {
        return reason;
    }
    return 1 + error + reason;
}

static long
dispatch_rows(const long *spec, PyObject *p)
{
    int err = 0;
    PyObject *value = item(p, k_arguments, &err);
    if (err) {
        return ERR;
    }
    if (value == NULL || !PyUnicode_CheckExact(value)) {
        return ASK; /* shown as compact JSON, made in Python */
    }
    long rows = text_rows(value, 0, spec[S_ARGS]);
    if (rows < 0) {
        return rows;
    }
    return 1 + shown(rows, spec[S_DISPATCH_LIMIT], spec[S_DISPATCH_SHOWN]);
}

static long
count(const long *spec, PyObject *kind, PyObject *p)
{
    if (PyUnicode_CompareWithASCIIString(kind, "message") == 0) {
        return message_rows(spec, p);
    }
    if (PyUnicode_CompareWithASCIIString(kind, "tool-settled") == 0) {
        return settle_rows(spec, p);
    }
    if (PyUnicode_CompareWithASCIIString(kind, "tool-dispatched") == 0) {
        return dispatch_rows(spec, p);
    }
    return ASK;
}

static PyObject *
counter_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Counter *c = (Counter *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 3 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_SetString(PyExc_TypeError, "Counter(kind, payload, raw) takes 3 arguments");
        return NULL;
    }
    PyObject *kind = args[0], *p = args[1], *raw = args[2];
    long rows = ASK;
    if (PyBytes_Check(raw) && PyBytes_GET_SIZE(raw) >= c->spec[S_BIG]) {
        rows = UNKNOWN; /* shown in part by the builder */
    } else if (PyUnicode_CheckExact(kind) && PyDict_CheckExact(p)) {
        rows = count(c->spec, kind, p);
    }
    return answer(rows, c->fallback, args, nargs);
}

static PyObject *
counter_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *spec, *fallback;
    static char *names[] = {"spec", "fallback", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO:Counter", names, &spec, &fallback)) {
        return NULL;
    }
    PyObject *seq = PySequence_Fast(spec, "spec must be a sequence of ints");
    if (seq == NULL) {
        return NULL;
    }
    if (PySequence_Fast_GET_SIZE(seq) != S_FIELDS) {
        Py_DECREF(seq);
        return PyErr_Format(PyExc_ValueError, "spec must hold %d ints", S_FIELDS);
    }
    if (!PyCallable_Check(fallback)) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_TypeError, "fallback must be callable");
        return NULL;
    }
    Counter *c = (Counter *)type->tp_alloc(type, 0);
    if (c == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    for (int i = 0; i < S_FIELDS; i++) {
        c->spec[i] = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (c->spec[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            Py_DECREF(c);
            return NULL;
        }
    }
    Py_DECREF(seq);
    for (int i = S_BODY; i <= S_ARGS; i++) {
        if (c->spec[i] < 1) {
            c->spec[i] = 1;
        }
    }
    Py_INCREF(fallback);
    c->fallback = fallback;
    c->vectorcall = counter_vectorcall;
    return (PyObject *)c;
}

static int
counter_traverse(Counter *c, visitproc visit, void *arg)
{
    Py_VISIT(c->fallback);
    return 0;
}

static int
counter_clear(Counter *c)
{
    Py_CLEAR(c->fallback);
    return 0;
}

static void
counter_dealloc(Counter *c)
{
    PyObject_GC_UnTrack(c);
    counter_clear(c);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

PyDoc_STRVAR(counter_doc,
"Counter(spec, fallback)\n"
"--\n"
"\n"
"A `core.analysis.Measure`: (kind, payload, raw) -> rows of a plain line in the\n"
"file view, counted here for printable-ASCII messages, calls, dispatches and\n"
"settles; any other line is `fallback(kind, payload, raw)`. `spec` is\n"
"`viewer.line_rows.PlainRows.spec`.");

static PyTypeObject CounterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "transcript_view.viewer._rows.Counter",
    .tp_doc = counter_doc,
    .tp_basicsize = sizeof(Counter),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = counter_new,
    .tp_dealloc = (destructor)counter_dealloc,
    .tp_traverse = (traverseproc)counter_traverse,
    .tp_clear = (inquiry)counter_clear,
    .tp_vectorcall_offset = offsetof(Counter, vectorcall),
    .tp_call = PyVectorcall_Call,
};

static struct PyModuleDef rows_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "transcript_view.viewer._rows",
    .m_doc = "The file view's row count of a plain line (viewer/line_rows.py, session_rows.py).",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__rows(void)
{
    if (intern(&k_content, "content") < 0 || intern(&k_tool_calls, "tool-calls") < 0
        || intern(&k_function, "function") < 0 || intern(&k_arguments, "arguments") < 0
        || intern(&k_error, "error") < 0 || intern(&k_reason, "reason") < 0
        || intern(&k_artifact, "artifact") < 0 || intern(&k_elided, "[... elided ") < 0) {
        return NULL;
    }
    if (PyType_Ready(&CounterType) < 0 || session_rows_ready() < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&rows_module);
    if (m == NULL) {
        return NULL;
    }
    Py_INCREF(&CounterType);
    if (PyModule_AddObject(m, "Counter", (PyObject *)&CounterType) < 0) {
        Py_DECREF(&CounterType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&SessionCounterType);
    if (PyModule_AddObject(m, "SessionCounter", (PyObject *)&SessionCounterType) < 0) {
        Py_DECREF(&SessionCounterType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
