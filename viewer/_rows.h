/*
 * What the two halves of the `viewer._rows` extension share: `_rows.c` (the module, and
 * the reference format's count) and `_session_rows.c` (Claude Code's and Codex's).
 */

#ifndef TRANSCRIPT_VIEW_ROWS_H
#define TRANSCRIPT_VIEW_ROWS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* What a count can say besides a number of rows. */
#define UNKNOWN (-1) /* the view builds the line to count it (a marker, a big line) */
#define ASK (-2)     /* the Python measure counts it */
#define ERR (-3)     /* a Python error is set */

static inline long
shown(long rows, long limit, long collapsed)
{
    return rows <= limit ? rows : collapsed;
}

/* A value Python's `isinstance(v, Mapping)` is False for, decoded JSON being what it is. */
static inline int
never_mapping(PyObject *v)
{
    return v == Py_None || PyUnicode_Check(v) || PyLong_Check(v) || PyFloat_Check(v)
           || PyList_Check(v);
}

/* Borrowed `d[key]`, NULL if absent; *err set on a Python error. */
static inline PyObject *
item(PyObject *d, PyObject *key, int *err)
{
    PyObject *v = PyDict_GetItemWithError(d, key);
    if (v == NULL && PyErr_Occurred()) {
        *err = 1;
    }
    return v;
}

/* What a counter's call returns for `rows`: the count, NULL on an error, or the Python
 * measure's answer (`fallback(*args)`) where the count asked for it. */
static inline PyObject *
answer(long rows, PyObject *fallback, PyObject *const *args, size_t nargs)
{
    if (rows == ERR) {
        return NULL;
    }
    if (rows == ASK) {
        return PyObject_Vectorcall(fallback, args, nargs, NULL);
    }
    return PyLong_FromLong(rows);
}

/* `*slot` = the interned `text`: 0, or -1 on an error. */
static inline int
intern(PyObject **slot, const char *text)
{
    *slot = PyUnicode_InternFromString(text);
    return *slot == NULL ? -1 : 0;
}

/* `viewer._rows.SessionCounter` (`_session_rows.c`), and its start: 0, or -1 on an error. */
extern PyTypeObject SessionCounterType;
int session_rows_ready(void);

#endif
