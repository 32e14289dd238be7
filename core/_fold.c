/*
 * core._map's fold: the operation steps of a pass without exact ids, in C.
 *
 * `AnalysisPass._message`, `._dispatched` and `._settled` (core/analysis.py) are
 * the definition. The native map calls them once for each tool call, each tool
 * result and each settle, and for a small transcript those calls cost about a
 * fifth of its check (two to three microseconds an operation, most of it the
 * calls themselves and the table's methods under them). Here the common cases
 * are the same statements on the pass's own containers: its queues, pending
 * operations and message digests (the same dicts and lists), and the table's
 * columns (the same arrays: rows from before the run written in place through
 * their buffers, new rows kept here and appended when the run ends).
 *
 * Anything that is not a plain match is left to the Python method, which sees
 * the table as this fold left it (`fold_sync` first, `fold_resume` after): a
 * message with markers, a dispatch whose arguments do not match their digest,
 * and a settle of an operation not pending or whose result does not match its
 * digest (each makes a finding or a marker, whose text is Python's). A step
 * that returns 0 has changed nothing.
 *
 * `tests/core/test_native_map.py` holds the two to the same pass state on every
 * fixture, on odd lines and on random and mutated transcripts, and
 * `test_fast_path.py` the analyses to the plain pass's.
 */

#include "_map.h"

/* `spec`: what `core.analysis._native_fold` hands in. */
enum {
    F_CALL_POS,       /* array('i') */
    F_FLAGS,          /* array('b') */
    F_CALL,           /* array('i'): the line columns */
    F_DISPATCH,
    F_MESSAGE,
    F_SETTLE,
    F_DISPATCH_KEYS,  /* array('q'): the pass's op id key of each row (0: none) */
    F_ARTIFACTS,      /* dict: row -> the settle's artifact key */
    F_UNDISPATCHED,   /* dict: call id -> [rows] */
    F_UNANSWERED,     /* dict: call id -> [rows] */
    F_PENDING,        /* dict: op id -> row */
    F_MESSAGE_DIGEST, /* dict: row -> the tool message's digest */
    F_DEFERRED,       /* list: what a worker's fold leaves to the real one */
    F_TAKEN_CALLS,    /* list of keys (a worker's fold) */
    F_ASKED_ANSWERS,  /* list of keys (a worker's fold) */
    F_LOCAL,          /* bool: a worker's fold of one batch */
    F_ERROR,          /* int: the flag of a result that reports an error */
    F_HAS_ARTIFACT,   /* int: the flag of a settle that names an artifact */
    F_EV_DISPATCH,    /* the deferred entries' codes */
    F_EV_ANSWER,
    F_DERIVED,        /* tuple: what the table derives from its rows, emptied as they land */
    F_SPEC_FIELDS
};

/* The columns, as `cols`, `views` and `fresh` index them. */
enum { C_POS, C_FLAGS, C_CALL, C_DISPATCH, C_MESSAGE, C_SETTLE, C_KEY, C_COLUMNS };

static const Py_ssize_t WIDTH[C_COLUMNS] = {4, 1, 4, 4, 4, 4, 8};
static const char *const CODE[C_COLUMNS] = {"i", "b", "i", "i", "i", "i", "q"};

#define SPEC(f, i) PyTuple_GET_ITEM((f)->spec, (i))

static char *
cell(Fold *f, int c, Py_ssize_t row)
{
    if (row >= f->base) {
        return f->fresh[c].data + (row - f->base) * WIDTH[c];
    }
    return (char *)f->views[c].buf + row * WIDTH[c];
}

static int32_t
get_line(Fold *f, int c, Py_ssize_t row)
{
    int32_t v;
    memcpy(&v, cell(f, c, row), 4);
    return v;
}

/* `column[row] = n`, raising what the array's item assignment raises. */
static int
set_line(Fold *f, int c, Py_ssize_t row, Py_ssize_t n)
{
    if (row < 0 || row >= f->rows) {
        PyErr_SetString(PyExc_IndexError, "array assignment index out of range");
        return -1;
    }
    if (n > INT32_MAX || n < INT32_MIN) {
        PyErr_SetString(PyExc_OverflowError, "signed integer is greater than maximum");
        return -1;
    }
    int32_t v = (int32_t)n;
    memcpy(cell(f, c, row), &v, 4);
    return 0;
}

static void
set_flag(Fold *f, Py_ssize_t row, char flag)
{
    *cell(f, C_FLAGS, row) |= flag;
}

/* `Operations.add_call` (`pos` >= 0) or `.add_dispatch`, and `dispatch_keys.append(0)`.
 * What the arrays' appends would refuse is refused before any column has the row. */
static int
add_row(Fold *f, Py_ssize_t pos, Py_ssize_t call, Py_ssize_t dispatch)
{
    if (pos > INT32_MAX || call > INT32_MAX || dispatch > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "signed integer is greater than maximum");
        return -1;
    }
    if (add_i32(&f->fresh[C_POS], (int32_t)pos) < 0 || add_i8(&f->fresh[C_FLAGS], 0) < 0
        || add_i32(&f->fresh[C_CALL], (int32_t)call) < 0
        || add_i32(&f->fresh[C_DISPATCH], (int32_t)dispatch) < 0
        || add_i32(&f->fresh[C_MESSAGE], -1) < 0 || add_i32(&f->fresh[C_SETTLE], -1) < 0
        || add_i64(&f->fresh[C_KEY], 0) < 0) {
        return -1;
    }
    f->rows++;
    return 0;
}

/* `AnalysisPass._take`: the first row waiting under `key`, taken off its queue; -1: none. */
static int
take(PyObject *queues, PyObject *key, Py_ssize_t *row)
{
    *row = -1;
    PyObject *queue = PyDict_GetItemWithError(queues, key);
    if (queue == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    if (!PyList_CheckExact(queue)) {
        PyErr_SetString(PyExc_TypeError, "a fold's queue is a list of rows");
        return -1;
    }
    if (PyList_GET_SIZE(queue) == 0) {
        return 0;
    }
    Py_ssize_t first = PyLong_AsSsize_t(PyList_GET_ITEM(queue, 0));
    if (first == -1 && PyErr_Occurred()) {
        return -1;
    }
    int rc = PyList_GET_SIZE(queue) == 1 ? PyDict_DelItem(queues, key)
                                         : PySequence_DelItem(queue, 0);
    if (rc < 0) {
        return -1;
    }
    *row = first;
    return 0;
}

/* `queues.setdefault(key, []).append(row)`, as the steps spell it out. */
static int
enqueue(PyObject *queues, PyObject *key, Py_ssize_t row)
{
    PyObject *r = PyLong_FromSsize_t(row);
    if (r == NULL) {
        return -1;
    }
    PyObject *queue = PyDict_GetItemWithError(queues, key);
    int rc;
    if (queue != NULL) {
        rc = PyList_Append(queue, r);
    }
    else if (PyErr_Occurred()) {
        rc = -1;
    }
    else {
        PyObject *fresh = PyList_New(1);
        if (fresh == NULL) {
            Py_DECREF(r);
            return -1;
        }
        PyList_SET_ITEM(fresh, 0, Py_NewRef(r));
        rc = PyDict_SetItem(queues, key, fresh);
        Py_DECREF(fresh);
    }
    Py_DECREF(r);
    return rc;
}

/* `list.append(_key(text))`. */
static int
add_key(PyObject *list, PyObject *text)
{
    int64_t key;
    if (key_of(text, &key) < 0) {
        return -1;
    }
    PyObject *k = PyLong_FromLongLong(key);
    if (k == NULL) {
        return -1;
    }
    int rc = PyList_Append(list, k);
    Py_DECREF(k);
    return rc;
}

int
fold_resume(Fold *f)
{
    if (!f->on || f->viewing) {
        return 0;
    }
    Py_ssize_t rows = -1;
    for (int c = 0; c < C_COLUMNS; c++) {
        if (PyObject_GetBuffer(f->cols[c], &f->views[c], PyBUF_WRITABLE | PyBUF_FORMAT) < 0) {
            while (--c >= 0) {
                PyBuffer_Release(&f->views[c]);
            }
            return -1;
        }
        Py_ssize_t n = f->views[c].len / WIDTH[c];
        if (!holds(&f->views[c], CODE[c], WIDTH[c]) || (rows >= 0 && n != rows)) {
            for (; c >= 0; c--) {
                PyBuffer_Release(&f->views[c]);
            }
            PyErr_SetString(PyExc_TypeError, "a fold's columns are arrays of its rows");
            return -1;
        }
        rows = n;
    }
    f->viewing = 1;
    f->base = f->rows = rows;
    return 0;
}

int
fold_sync(Fold *f)
{
    if (!f->on) {
        return 0;
    }
    if (f->viewing) {
        for (int c = 0; c < C_COLUMNS; c++) {
            PyBuffer_Release(&f->views[c]);
        }
        f->viewing = 0;
    }
    for (int c = 0; c < C_COLUMNS; c++) {
        if (flush(f->cols[c], &f->fresh[c]) < 0) {
            return -1;
        }
    }
    f->base = f->rows;
    /* As `Operations._changed` does: whatever was derived from the rows is stale. */
    PyObject *derived = SPEC(f, F_DERIVED);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(derived); i++) {
        PyObject *d = PyTuple_GET_ITEM(derived, i);
        Py_ssize_t n = PyObject_Length(d);
        if (n < 0) {
            return -1;
        }
        if (n > 0) {
            PyObject *r = PyObject_CallMethod(d, "clear", NULL);
            if (r == NULL) {
                return -1;
            }
            Py_DECREF(r);
        }
    }
    return 0;
}

int
fold_open(Fold *f, PyObject *spec)
{
    memset(f, 0, sizeof *f);
    if (spec == Py_None) {
        return 1;
    }
    if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != F_SPEC_FIELDS) {
        PyErr_SetString(PyExc_TypeError, "the native fold takes _native_fold's tuple");
        return -1;
    }
    for (int i = F_ARTIFACTS; i <= F_MESSAGE_DIGEST; i++) {
        if (!PyDict_CheckExact(PyTuple_GET_ITEM(spec, i))) {
            PyErr_SetString(PyExc_TypeError, "the native fold's tables are dicts");
            return -1;
        }
    }
    for (int i = F_DEFERRED; i <= F_ASKED_ANSWERS; i++) {
        if (!PyList_CheckExact(PyTuple_GET_ITEM(spec, i))) {
            PyErr_SetString(PyExc_TypeError, "the native fold's logs are lists");
            return -1;
        }
    }
    if (!PyTuple_CheckExact(PyTuple_GET_ITEM(spec, F_DERIVED))) {
        PyErr_SetString(PyExc_TypeError, "the native fold's derived containers are a tuple");
        return -1;
    }
    int local = PyObject_IsTrue(PyTuple_GET_ITEM(spec, F_LOCAL));
    if (local < 0) {
        return -1;
    }
    long error = PyLong_AsLong(PyTuple_GET_ITEM(spec, F_ERROR));
    long artifact = PyLong_AsLong(PyTuple_GET_ITEM(spec, F_HAS_ARTIFACT));
    if (PyErr_Occurred()) {
        return -1;
    }
    if (error < 1 || error > 127 || artifact < 1 || artifact > 127) {
        PyErr_SetString(PyExc_ValueError, "the native fold's flags are bits of an array('b')");
        return -1;
    }
    f->spec = Py_NewRef(spec);
    f->local = local;
    f->error_flag = (char)error;
    f->artifact_flag = (char)artifact;
    for (int c = 0; c < C_COLUMNS; c++) {
        f->cols[c] = PyTuple_GET_ITEM(spec, F_CALL_POS + c);
    }
    f->on = 1;
    if (fold_resume(f) < 0) {
        f->on = 0;
        Py_CLEAR(f->spec);
        return -1;
    }
    return 1;
}

int
fold_close(Fold *f)
{
    if (!f->on) {
        return 0;
    }
    /* The rows go into the arrays even when the run failed: the queues name them. */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    int rc = fold_sync(f);
    if (type != NULL) {
        PyErr_Restore(type, value, tb); /* the run's own error wins */
        rc = -1;
    }
    for (int c = 0; c < C_COLUMNS; c++) {
        PyMem_Free(f->fresh[c].data);
    }
    Py_CLEAR(f->spec);
    f->on = 0;
    return rc;
}

static int
in_range(Fold *f, Py_ssize_t row)
{
    if (row < 0 || row >= f->rows) {
        PyErr_SetString(PyExc_IndexError, "array index out of range");
        return -1;
    }
    return 0;
}

/* `_message` without markers: a turn's calls queued, or a tool result matched (`_answer`). */
int
fold_message(Fold *f, Py_ssize_t n, PyObject *line, PyObject *call_ids, PyObject *call_id,
             int is_error, PyObject *digest)
{
    PyObject *undispatched = SPEC(f, F_UNDISPATCHED);
    Py_ssize_t calls = PyTuple_GET_SIZE(call_ids);
    if (calls > 0) {
        for (Py_ssize_t pos = 0; pos < calls; pos++) {
            Py_ssize_t row = f->rows;
            if (add_row(f, pos, n, -1) < 0
                || enqueue(undispatched, PyTuple_GET_ITEM(call_ids, pos), row) < 0) {
                return -1;
            }
        }
        return 1;
    }
    if (call_id == Py_None) {
        return 1;
    }
    Py_ssize_t row;
    if (take(SPEC(f, F_UNANSWERED), call_id, &row) < 0) {
        return -1;
    }
    if (row < 0) {
        /* A transcript written before dispatch lines existed answers calls directly. */
        if (take(undispatched, call_id, &row) < 0) {
            return -1;
        }
        if (f->local) {
            if (row < 0) {
                PyObject *items[6] = {SPEC(f, F_EV_ANSWER), line, call_id,
                                      is_error ? Py_True : Py_False, digest, Py_None};
                return append_tuple(SPEC(f, F_DEFERRED), items, 6) < 0 ? -1 : 1;
            }
            if (add_key(SPEC(f, F_TAKEN_CALLS), call_id) < 0) {
                return -1;
            }
        }
    }
    if (f->local && add_key(SPEC(f, F_ASKED_ANSWERS), call_id) < 0) {
        return -1;
    }
    if (row < 0) {
        return 1;
    }
    if (set_line(f, C_MESSAGE, row, n) < 0) {
        return -1;
    }
    if (is_error) {
        set_flag(f, row, f->error_flag);
    }
    if (get_line(f, C_DISPATCH, row) >= 0 && get_line(f, C_SETTLE, row) < 0) {
        PyObject *r = PyLong_FromSsize_t(row);
        if (r == NULL) {
            return -1;
        }
        int rc = PyDict_SetItem(SPEC(f, F_MESSAGE_DIGEST), r, digest);
        Py_DECREF(r);
        if (rc < 0) {
            return -1;
        }
    }
    return 1;
}

/* `_dispatched` whose arguments match their digest (or have none). */
int
fold_dispatched(Fold *f, Py_ssize_t n, PyObject *line, PyObject *call, PyObject *op_id,
                int64_t key)
{
    Py_ssize_t row;
    if (take(SPEC(f, F_UNDISPATCHED), call, &row) < 0) {
        return -1;
    }
    if (row < 0) {
        row = f->rows;
        if (add_row(f, -1, -1, n) < 0) {
            return -1;
        }
        if (f->local) {
            PyObject *r = PyLong_FromSsize_t(row);
            if (r == NULL) {
                return -1;
            }
            PyObject *items[4] = {SPEC(f, F_EV_DISPATCH), line, call, r};
            int rc = append_tuple(SPEC(f, F_DEFERRED), items, 4);
            Py_DECREF(r);
            if (rc < 0) {
                return -1;
            }
        }
    }
    else {
        if (set_line(f, C_DISPATCH, row, n) < 0) {
            return -1;
        }
        if (f->local && add_key(SPEC(f, F_TAKEN_CALLS), call) < 0) {
            return -1;
        }
    }
    if (op_id != Py_None) {
        /* Every id is unique (or this pass is thrown away): a new operation. */
        PyObject *r = PyLong_FromSsize_t(row);
        if (r == NULL) {
            return -1;
        }
        int rc = PyDict_SetItem(SPEC(f, F_PENDING), op_id, r);
        Py_DECREF(r);
        if (rc < 0) {
            return -1;
        }
        memcpy(cell(f, C_KEY, row), &key, 8);
    }
    return enqueue(SPEC(f, F_UNANSWERED), call, row) < 0 ? -1 : 1;
}

/* `_settled` of a pending operation whose result matches its digest (or has none). */
int
fold_settled(Fold *f, Py_ssize_t n, PyObject *op_id, PyObject *artifact, PyObject *want)
{
    if (op_id == Py_None) {
        return 0;
    }
    PyObject *pending = SPEC(f, F_PENDING), *digests = SPEC(f, F_MESSAGE_DIGEST);
    PyObject *found = PyDict_GetItemWithError(pending, op_id);
    if (found == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    Py_ssize_t row = PyLong_AsSsize_t(found);
    if (row == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (row < 0) {
        return 0;
    }
    if (in_range(f, row) < 0) {
        return -1;
    }
    PyObject *r = PyLong_FromSsize_t(row);
    if (r == NULL) {
        return -1;
    }
    int ok = -1;
    PyObject *digest = PyDict_GetItemWithError(digests, r);
    if (digest == NULL && PyErr_Occurred()) {
        goto done;
    }
    Py_XINCREF(digest);
    if (want != Py_None && digest != NULL) {
        int same = PyObject_RichCompareBool(want, digest, Py_EQ);
        if (same <= 0) {
            ok = same; /* 0: a mismatch, whose finding is Python's */
            goto done;
        }
    }
    if (PyDict_DelItem(pending, op_id) < 0 || set_line(f, C_SETTLE, row, n) < 0) {
        goto done;
    }
    if (artifact != Py_None) {
        if (PyDict_SetItem(SPEC(f, F_ARTIFACTS), r, artifact) < 0) {
            goto done;
        }
        set_flag(f, row, f->artifact_flag);
    }
    if (digest != NULL && PyDict_DelItem(digests, r) < 0) {
        goto done;
    }
    ok = 1;
done:
    Py_XDECREF(digest);
    Py_DECREF(r);
    return ok;
}
