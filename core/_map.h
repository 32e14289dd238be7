/*
 * What the two halves of the `core._map` extension share: `_map.c` (the module, and the
 * map of raw lines) and `_fold.c` (the fold of their operations into a pass's table).
 */

#ifndef TRANSCRIPT_VIEW_MAP_H
#define TRANSCRIPT_VIEW_MAP_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* A growable column of fixed-size numbers, handed to an array's `frombytes` at the end. */
typedef struct {
    char *data;
    Py_ssize_t size, cap;
} Column;

static inline int
column_add(Column *c, const void *item, Py_ssize_t width)
{
    if (c->size + width > c->cap) {
        Py_ssize_t cap = c->cap ? c->cap * 2 : 4096;
        while (cap < c->size + width) {
            cap *= 2;
        }
        char *grown = PyMem_Realloc(c->data, (size_t)cap);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        c->data = grown;
        c->cap = cap;
    }
    memcpy(c->data + c->size, item, (size_t)width);
    c->size += width;
    return 0;
}

static inline int
add_i64(Column *c, int64_t v)
{
    return column_add(c, &v, 8);
}

static inline int
add_i32(Column *c, int32_t v)
{
    return column_add(c, &v, 4);
}

static inline int
add_i8(Column *c, int8_t v)
{
    return column_add(c, &v, 1);
}

/* A line number into an array('i') column: past its range, what `append` raises. */
static inline int
add_line(Column *c, Py_ssize_t n)
{
    if (n > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "signed integer is greater than maximum");
        return -1;
    }
    return add_i32(c, (int32_t)n);
}

/* Whether a buffer holds native numbers of `code` ('q', 'i'), as an array of them does. */
static inline int
holds(Py_buffer *view, const char *code, Py_ssize_t size)
{
    return view->itemsize == size && view->format != NULL && strcmp(view->format, code) == 0;
}

/* Append what `c` holds to `array` (its `frombytes`), and empty it. */
static inline int
flush(PyObject *array, Column *c)
{
    if (c->size == 0) {
        return 0;
    }
    static PyObject *frombytes; /* one per file that includes this: interned once */
    if (frombytes == NULL && (frombytes = PyUnicode_InternFromString("frombytes")) == NULL) {
        return -1;
    }
    PyObject *bytes = PyBytes_FromStringAndSize(c->data, c->size);
    if (bytes == NULL) {
        return -1;
    }
    PyObject *r = PyObject_CallMethodOneArg(array, frombytes, bytes);
    Py_DECREF(bytes);
    if (r == NULL) {
        return -1;
    }
    Py_DECREF(r);
    c->size = 0;
    return 0;
}

/* Append a new tuple of `items` (references borrowed) to `list`. */
static inline int
append_tuple(PyObject *list, PyObject *const *items, Py_ssize_t n)
{
    PyObject *t = PyTuple_New(n);
    if (t == NULL) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTuple_SET_ITEM(t, i, Py_NewRef(items[i]));
    }
    int rc = PyList_Append(list, t);
    Py_DECREF(t);
    return rc;
}

/* `hash(text) or 1`. */
static inline int
key_of(PyObject *text, int64_t *out)
{
    Py_hash_t h = PyObject_Hash(text);
    if (h == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = h ? (int64_t)h : 1;
    return 0;
}


/* The native fold (`_fold.c`): the steps of a pass without exact ids
 * (`AnalysisPass._message`, `._dispatched`, `._settled`), on that pass's own containers. */
typedef struct {
    int on, local;
    char error_flag, artifact_flag; /* the flag bits (spec's F_ERROR, F_HAS_ARTIFACT) */
    PyObject *spec;       /* the tuple `core.analysis._native_fold` made (strong) */
    PyObject *cols[7];    /* borrowed from spec: the table's columns, then dispatch_keys */
    Py_buffer views[7];   /* the arrays' rows before `base`, written in place */
    int viewing;
    Column fresh[7];      /* rows from `base` on, not in the arrays yet */
    Py_ssize_t base, rows;
} Fold;

/* Shared by the extension's two files, and no one else's to link against. */
#if defined(__GNUC__)
#define FOLD_API __attribute__((visibility("hidden")))
#else
#define FOLD_API
#endif

/* 1: `spec` taken (or None: off); -1 on an error. */
FOLD_API int fold_open(Fold *f, PyObject *spec);
/* Each step: 1 done, 0 left to the pass's Python method (nothing changed), -1 on an error. */
FOLD_API int fold_message(Fold *f, Py_ssize_t n, PyObject *line, PyObject *call_ids,
                          PyObject *call_id, int is_error, PyObject *digest);
FOLD_API int fold_dispatched(Fold *f, Py_ssize_t n, PyObject *line, PyObject *call,
                             PyObject *op_id, int64_t key);
FOLD_API int fold_settled(Fold *f, Py_ssize_t n, PyObject *op_id, PyObject *artifact,
                          PyObject *want);
/* Before Python reads or grows the table: every row into the arrays, the views let go. */
FOLD_API int fold_sync(Fold *f);
/* After: the views taken again, over the rows as Python left them. */
FOLD_API int fold_resume(Fold *f);
/* At the end of a run: `fold_sync`, and everything let go (keeps a pending error). */
FOLD_API int fold_close(Fold *f);

#endif
