/*
 * core._map: the analysis pass's map of a run of raw lines, in C (optional).
 *
 * `core.analysis._map_into` is the definition: for each line, the parse, then
 * what the fold needs of it (counts, id keys, the replay's columns, one event
 * for each line that takes part in an operation, a marker or the replay's
 * edits). It runs once a line, and in Python its loop costs more than the JSON
 * parse it starts with: about 2.5 us a line of dictionary reads, type checks
 * and appends against about 1.4 us for the parse. This is the same loop over
 * lines given as bytes, statement for statement, with every rule that is more
 * than a field's read left to the Python it was written in: the parse itself
 * and its standard-parser fallback, a field's text when it is not a string
 * (`field_text`), the digests, the markers, the arguments-digest check, an
 * elision's items and the caller's measure are the same Python callables
 * `_map_into` calls, handed in by `core.analysis` (`env`). The fold's steps are
 * the pass's Python methods too, but for their common cases, which `_fold.c`
 * takes where the pass allows it (`out[O_FOLD_NATIVE]`).
 * The tests hold the two to the same batches on every fixture, on hostile
 * lines and on random and mutated transcripts.
 *
 * Every value it reads came from a JSON parser, so a dict is a dict; any other
 * mapping is still read through `.get`, as the Python does.
 */

#include "_map.h"

#include <stdlib.h>

/* `env`: what core.analysis hands in for each batch (see `_native_env` there). */
enum {
    E_DECODE,        /* msgspec's decoder: bytes -> object (raises on what it refuses) */
    E_PLAIN,         /* (raw, line, offset) -> None | LineProblem | (data, type) */
    E_DEEPER,        /* _deeper_than(data, limit) -> bool */
    E_DEEP_BYTES,    /* int: lines this long may nest too deep for msgspec's word */
    E_DEEP,          /* int: the nesting limit */
    E_MAPPING,       /* collections.abc.Mapping */
    E_ROLE_CODES,    /* dict: role -> code (7 for any other role) */
    E_STICKY,        /* int: the replay flag of a sticky message */
    E_FIELD_TEXT,    /* field_text(value) -> str */
    E_STRING_DIGEST, /* string_digest(text) -> str */
    E_SITES,         /* (line, id, role, content) -> None | (sites, ambiguous) */
    E_MISMATCH,      /* (want, arguments) -> None | str */
    E_ELISION_ITEMS, /* (payload) -> list */
    E_EMPTY,         /* the empty payload */
    E_VERSION,       /* int: the envelope version */
    E_EV_MESSAGE,    /* the event codes */
    E_EV_DISPATCH,
    E_EV_SETTLE,
    E_EV_COMPACTION,
    E_EV_ELISION,
    E_ENCODE,        /* msgspec's encoder: str -> its JSON bytes (string_digest's first step) */
    E_SHA256,        /* hashlib.sha256 */
    E_ENCODE_ERRORS, /* what the encoder raises for a str the rule re-encodes itself */
    E_FIELDS
};

/* `out`: the batch's containers (see `_map_native` there). */
enum {
    O_TYPES,      /* dict: type -> count */
    O_KEYS,       /* array('q') */
    O_KEY_LINES,  /* array('i') */
    O_LINES,      /* array('i'): the replay's lines */
    O_RKEYS,      /* array('q'): the replay's keys */
    O_FLAGS,      /* array('b'): the replay's flags */
    O_ROLES,      /* dict: line -> role (a role without a code) */
    O_EVENTS,     /* list */
    O_PROBLEMS,   /* list */
    O_FOLD_MESSAGE,    /* None, or the fold's steps */
    O_FOLD_DISPATCHED,
    O_FOLD_SETTLED,
    O_MEASURE,    /* None, or the caller's measure */
    O_MEASURES,   /* None, or array('i') of the batch's lines */
    O_BASE,       /* int: the batch's first line (measures[line - base]) */
    O_FOLD_NATIVE, /* None, or what the native fold writes (`_native_fold`; see _fold.c) */
    O_FIELDS
};

/* `state`: a list the run reads and writes back, the batch's running values. */
enum { S_ENVELOPES, S_LAST_CONTENT, S_LAST_TURN, S_FIRST_ENVELOPE, S_META_LINE, S_FIELDS };

static PyObject *k_type, *k_v, *k_id, *k_payload, *k_role, *k_user, *k_sticky, *k_sysprompt,
    *k_depth, *k_content, *k_tool_calls, *k_tool_call_id, *k_is_error, *k_elided,
    *k_arguments_digest, *k_arguments, *k_call_id, *k_op_id, *k_artifact, *k_result_digest,
    *k_replaces, *k_get, *k_empty_str, *k_empty_tuple, *k_hexdigest;

/* `d.get(key)` as a new reference (NULL with an error set when it fails). */
static PyObject *
get(PyObject *d, PyObject *key)
{
    if (PyDict_CheckExact(d)) {
        PyObject *v = PyDict_GetItemWithError(d, key);
        if (v == NULL) {
            if (PyErr_Occurred()) {
                return NULL;
            }
            Py_RETURN_NONE;
        }
        return Py_NewRef(v);
    }
    return PyObject_CallMethodOneArg(d, k_get, key);
}

/* `field_text(value)`: None is empty, a string itself, anything else its JSON. New ref. */
static PyObject *
field_text(PyObject *env, PyObject *value)
{
    if (value == Py_None) {
        return Py_NewRef(k_empty_str);
    }
    if (PyUnicode_Check(value)) {
        return Py_NewRef(value);
    }
    return PyObject_CallOneArg(PyTuple_GET_ITEM(env, E_FIELD_TEXT), value);
}

/* Whether `value` is a mapping: a dict, or `isinstance(value, Mapping)`. -1: error. */
static int
is_mapping(PyObject *env, PyObject *value)
{
    if (PyDict_Check(value)) {
        return 1;
    }
    return PyObject_IsInstance(value, PyTuple_GET_ITEM(env, E_MAPPING));
}

/* Call `f(args...)` and drop its result. */
static int
call_drop(PyObject *f, PyObject *const *args, size_t n)
{
    PyObject *r = PyObject_Vectorcall(f, args, n, NULL);
    if (r == NULL) {
        return -1;
    }
    Py_DECREF(r);
    return 0;
}

/* An operation's line: to the fold's step in `out[fold]` when there is one (a worker's
 * own fold), else an event `(env[code], *args)` for the real fold, as `_map_into` does. */
#define MAX_STEP_ARGS 7

static int
to_fold(PyObject *env, PyObject *out, int fold, int code, PyObject *const *args, Py_ssize_t n)
{
    PyObject *step = PyTuple_GET_ITEM(out, fold);
    if (step != Py_None) {
        return call_drop(step, args, (size_t)n);
    }
    PyObject *items[MAX_STEP_ARGS + 1];
    items[0] = PyTuple_GET_ITEM(env, code);
    memcpy(items + 1, args, (size_t)n * sizeof(PyObject *));
    return append_tuple(PyTuple_GET_ITEM(out, O_EVENTS), items, n + 1);
}

typedef struct {
    PyObject *env, *out;
    Column keys, key_lines, lines, rkeys, flags;
    Py_ssize_t envelopes, last_content, last_turn;
    PyObject *first_envelope, *meta_line; /* strong references */
    Py_buffer measures;                    /* .obj NULL: not measured */
    Py_ssize_t base;
    Fold fold;                             /* .on: the fold's common steps are native */
} Run;

/* An operation's line for the pass's Python step (`to_fold`), where the native fold
 * leaves it or there is none: the table brought up to date first, looked at again after. */
static int
to_step(Run *r, int fold, int code, PyObject *const *args, Py_ssize_t n)
{
    if (fold_sync(&r->fold) < 0 || to_fold(r->env, r->out, fold, code, args, n) < 0) {
        return -1;
    }
    return fold_resume(&r->fold);
}

/* A message line: the replay's columns, then its event, if it takes part in one. */
/* `string_digest(text)` where the Python rule would take msgspec's bytes as they are:
 * a str of at most two bytes a code point (none beyond the BMP) without a \b or a \f,
 * that msgspec encodes (a lone surrogate it refuses). The rule's own three exceptions
 * are decided by the rule: for those, and for what is not a str, it is called. The
 * same bytes are hashed the same way, so the answer is the rule's; what this saves
 * is the rule's Python frame, once for each tool message and each dispatch. */
static PyObject *
text_digest(PyObject *env, PyObject *text)
{
    if (PyUnicode_CheckExact(text) && PyUnicode_KIND(text) != PyUnicode_4BYTE_KIND) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(text);
        Py_ssize_t b = PyUnicode_FindChar(text, '\b', 0, n, 1);
        Py_ssize_t f = b == -1 ? PyUnicode_FindChar(text, '\f', 0, n, 1) : b;
        if (b == -2 || f == -2) {
            return NULL;
        }
        if (f == -1) {
            PyObject *data = PyObject_CallOneArg(PyTuple_GET_ITEM(env, E_ENCODE), text);
            if (data != NULL) {
                PyObject *hash = PyObject_CallOneArg(PyTuple_GET_ITEM(env, E_SHA256), data);
                Py_DECREF(data);
                if (hash == NULL) {
                    return NULL;
                }
                PyObject *hex = PyObject_CallMethodNoArgs(hash, k_hexdigest);
                Py_DECREF(hash);
                return hex;
            }
            if (!PyErr_ExceptionMatches(PyTuple_GET_ITEM(env, E_ENCODE_ERRORS))) {
                return NULL; /* a MemoryError, an interrupt: not the rule's to answer */
            }
            PyErr_Clear(); /* refused (a lone surrogate): the rule knows what to do */
        }
    }
    return PyObject_CallOneArg(PyTuple_GET_ITEM(env, E_STRING_DIGEST), text);
}

/* `_arguments_mismatch(want, arguments)`: None when string arguments digest to `want`
 * (almost always: `text_digest`), else the rule, which words the finding. */
static PyObject *
arguments_mismatch(PyObject *env, PyObject *want, PyObject *arguments)
{
    if (PyUnicode_CheckExact(arguments) && PyUnicode_CheckExact(want)) {
        PyObject *got = text_digest(env, arguments);
        if (got == NULL) {
            return NULL;
        }
        int same = PyUnicode_Compare(got, want) == 0;
        Py_DECREF(got);
        if (same) {
            Py_RETURN_NONE;
        }
        if (PyErr_Occurred()) {
            return NULL;
        }
    }
    PyObject *args[2] = {want, arguments};
    return PyObject_Vectorcall(PyTuple_GET_ITEM(env, E_MISMATCH), args, 2, NULL);
}

static int
message(Run *r, Py_ssize_t n, PyObject *line, PyObject *env_id, int64_t key, PyObject *p)
{
    PyObject *env = r->env, *out = r->out;
    PyObject *role = NULL, *content = NULL, *call_ids = NULL, *call_id = NULL, *digest = NULL,
             *sites = NULL, *ambiguous = NULL, *v = NULL, *found = NULL;
    int ok = -1, is_error = 0;

    role = get(p, k_role);
    if (role == NULL) {
        goto done;
    }
    if (!PyUnicode_Check(role)) {
        Py_SETREF(role, Py_NewRef(k_user));
    }
    PyObject *code_obj = PyDict_GetItemWithError(PyTuple_GET_ITEM(env, E_ROLE_CODES), role);
    if (code_obj == NULL && PyErr_Occurred()) {
        goto done;
    }
    long code = code_obj == NULL ? 7 : PyLong_AsLong(code_obj);
    if (code == -1 && PyErr_Occurred()) {
        goto done;
    }
    if (code == 7 && PyDict_SetItem(PyTuple_GET_ITEM(out, O_ROLES), line, role) < 0) {
        goto done;
    }
    if (add_line(&r->lines, n) < 0) {
        goto done;
    }
    int64_t replay_key = key;
    if (env_id == Py_None || PyUnicode_GET_LENGTH(env_id) == 0) {
        PyObject *name = PyUnicode_FromFormat("line-%zd", n);
        if (name == NULL || key_of(name, &replay_key) < 0) {
            Py_XDECREF(name);
            goto done;
        }
        Py_DECREF(name);
    }
    if (add_i64(&r->rkeys, replay_key) < 0) {
        goto done;
    }
    int sticky = 0;
    PyObject *const sticky_keys[2] = {k_sticky, k_sysprompt};
    for (int i = 0; i < 2 && !sticky; i++) {
        v = get(p, sticky_keys[i]);
        if (v == NULL || (sticky = PyObject_IsTrue(v)) < 0) {
            goto done;
        }
        Py_CLEAR(v);
    }
    if (!sticky) {
        v = get(p, k_depth);
        if (v == NULL) {
            goto done;
        }
        sticky = v != Py_None;
        Py_CLEAR(v);
    }
    if (sticky) {
        long flag = PyLong_AsLong(PyTuple_GET_ITEM(env, E_STICKY));
        if (flag == -1 && PyErr_Occurred()) {
            goto done;
        }
        code |= flag;
    }
    if (add_i8(&r->flags, (int8_t)code) < 0) {
        goto done;
    }
    content = get(p, k_content);
    if (content == NULL) {
        goto done;
    }
    if (!PyUnicode_CheckExact(content)) {
        Py_SETREF(content, field_text(env, content));
        if (content == NULL) {
            goto done;
        }
    }
    call_ids = Py_NewRef(k_empty_tuple);
    call_id = Py_NewRef(Py_None);
    digest = Py_NewRef(Py_None);
    if (PyUnicode_CompareWithASCIIString(role, "assistant") == 0) {
        r->last_turn = n;
        v = get(p, k_tool_calls);
        if (v == NULL) {
            goto done;
        }
        if (PyList_Check(v) && PyList_GET_SIZE(v) > 0) {
            PyObject *ids = PyList_New(0);
            if (ids == NULL) {
                goto done;
            }
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); i++) {
                PyObject *c = Py_NewRef(PyList_GET_ITEM(v, i)); /* Python may run below */
                int m = PyDict_CheckExact(c) ? 1 : is_mapping(env, c);
                if (m < 0) {
                    Py_DECREF(c);
                    Py_DECREF(ids);
                    goto done;
                }
                if (!m) {
                    Py_DECREF(c);
                    continue;
                }
                PyObject *raw_id = get(c, k_id);
                Py_DECREF(c);
                PyObject *text = raw_id == NULL ? NULL : field_text(env, raw_id);
                Py_XDECREF(raw_id);
                if (text == NULL || PyList_Append(ids, text) < 0) {
                    Py_XDECREF(text);
                    Py_DECREF(ids);
                    goto done;
                }
                Py_DECREF(text);
            }
            Py_SETREF(call_ids, PyList_AsTuple(ids));
            Py_DECREF(ids);
            if (call_ids == NULL) {
                goto done;
            }
        }
        Py_CLEAR(v);
    }
    else if (PyUnicode_CompareWithASCIIString(role, "tool") == 0) {
        Py_SETREF(call_id, get(p, k_tool_call_id));
        if (call_id == NULL) {
            goto done;
        }
        if (!PyUnicode_Check(call_id)) {
            Py_SETREF(call_id, Py_NewRef(Py_None));
        }
        if (call_id != Py_None) {
            v = get(p, k_is_error);
            if (v == NULL || (is_error = PyObject_IsTrue(v)) < 0) {
                goto done;
            }
            Py_CLEAR(v);
            Py_SETREF(digest, text_digest(env, content));
            if (digest == NULL) {
                goto done;
            }
        }
    }
    sites = Py_NewRef(Py_None);
    ambiguous = Py_NewRef(Py_None);
    int has = PyUnicode_Contains(content, k_elided);
    if (has < 0) {
        goto done;
    }
    if (has) {
        PyObject *args[4] = {line, env_id, role, content};
        found = PyObject_Vectorcall(PyTuple_GET_ITEM(env, E_SITES), args, 4, NULL);
        if (found == NULL) {
            goto done;
        }
        if (found != Py_None) {
            if (!PyTuple_Check(found) || PyTuple_GET_SIZE(found) != 2) {
                PyErr_SetString(PyExc_TypeError, "the sites helper returns (sites, ambiguous)");
                goto done;
            }
            Py_SETREF(sites, Py_NewRef(PyTuple_GET_ITEM(found, 0)));
            Py_SETREF(ambiguous, Py_NewRef(PyTuple_GET_ITEM(found, 1)));
        }
    }
    int has_sites = sites == Py_None ? 0 : PyObject_IsTrue(sites);
    if (has_sites < 0) {
        goto done;
    }
    if (PyTuple_GET_SIZE(call_ids) > 0 || call_id != Py_None || has_sites) {
        int folded = 0;
        if (r->fold.on && !has_sites) {
            folded = fold_message(&r->fold, n, line, call_ids, call_id, is_error, digest);
            if (folded < 0) {
                goto done;
            }
        }
        PyObject *error = is_error ? Py_True : Py_False;
        PyObject *args[7] = {line, call_ids, call_id, error, digest, sites, ambiguous};
        if (!folded && to_step(r, O_FOLD_MESSAGE, E_EV_MESSAGE, args, 7) < 0) {
            goto done;
        }
    }
    ok = 0;
done:
    Py_XDECREF(role);
    Py_XDECREF(content);
    Py_XDECREF(call_ids);
    Py_XDECREF(call_id);
    Py_XDECREF(digest);
    Py_XDECREF(sites);
    Py_XDECREF(ambiguous);
    Py_XDECREF(v);
    Py_XDECREF(found);
    return ok;
}

static int
dispatched(Run *r, Py_ssize_t n, PyObject *line, PyObject *env_id, int64_t key, PyObject *p)
{
    PyObject *env = r->env;
    PyObject *want = NULL, *arguments = NULL, *mismatch = NULL, *call = NULL, *op_key = NULL;
    int ok = -1;
    want = get(p, k_arguments_digest);
    if (want == NULL || (arguments = get(p, k_arguments)) == NULL) {
        goto done;
    }
    if (want != Py_None && arguments != Py_None && PyUnicode_Check(want)) {
        mismatch = arguments_mismatch(env, want, arguments);
    }
    else {
        mismatch = Py_NewRef(Py_None);
    }
    if (mismatch == NULL || (call = get(p, k_call_id)) == NULL) {
        goto done;
    }
    if (!PyUnicode_CheckExact(call)) {
        Py_SETREF(call, field_text(env, call));
        if (call == NULL) {
            goto done;
        }
    }
    if (r->fold.on && mismatch == Py_None) {
        ok = fold_dispatched(&r->fold, n, line, call, env_id, env_id != Py_None ? key : 0);
        if (ok != 0) {
            ok = ok < 0 ? -1 : 0;
            goto done;
        }
    }
    op_key = PyLong_FromLongLong(env_id != Py_None ? key : 0);
    if (op_key == NULL) {
        ok = -1;
        goto done;
    }
    PyObject *args[5] = {line, call, env_id, op_key, mismatch};
    ok = to_step(r, O_FOLD_DISPATCHED, E_EV_DISPATCH, args, 5);
done:
    Py_XDECREF(want);
    Py_XDECREF(arguments);
    Py_XDECREF(mismatch);
    Py_XDECREF(call);
    Py_XDECREF(op_key);
    return ok;
}

static int
settled(Run *r, Py_ssize_t n, PyObject *line, PyObject *p)
{
    PyObject *env = r->env;
    PyObject *op_id = NULL, *artifact = NULL, *digest = NULL, *op_key = NULL;
    int ok = -1;
    op_id = get(p, k_op_id);
    if (op_id == NULL) {
        goto done;
    }
    if (!PyUnicode_Check(op_id)) {
        Py_SETREF(op_id, Py_NewRef(Py_None));
    }
    artifact = get(p, k_artifact);
    if (artifact == NULL) {
        goto done;
    }
    if (artifact != Py_None && !PyDict_CheckExact(artifact)) {
        int m = is_mapping(env, artifact);
        if (m < 0) {
            goto done;
        }
        if (!m) {
            Py_SETREF(artifact, Py_NewRef(Py_None));
        }
    }
    digest = get(p, k_result_digest);
    if (digest == NULL) {
        goto done;
    }
    if (digest != Py_None && !PyUnicode_Check(digest)) {
        Py_SETREF(digest, Py_NewRef(Py_None));
    }
    if (r->fold.on) {
        int folded = fold_settled(&r->fold, n, op_id, artifact, digest);
        if (folded != 0) {
            ok = folded < 0 ? -1 : 0;
            goto done;
        }
    }
    int64_t key = 0;
    if (op_id != Py_None && key_of(op_id, &key) < 0) {
        goto done;
    }
    op_key = PyLong_FromLongLong(key);
    if (op_key == NULL) {
        goto done;
    }
    PyObject *args[5] = {line, op_id, op_key, artifact, digest};
    ok = to_step(r, O_FOLD_SETTLED, E_EV_SETTLE, args, 5);
done:
    Py_XDECREF(op_id);
    Py_XDECREF(artifact);
    Py_XDECREF(digest);
    Py_XDECREF(op_key);
    return ok;
}

/* Decode `raw` as `_map_into` does; new refs in *data and *kind, both NULL for no envelope.
 * Returns 1 for an envelope, 0 for none (blank, or a problem already recorded), -1 on error. */
static int
parse(Run *r, PyObject *raw, Py_ssize_t n, Py_ssize_t offset, PyObject **data, PyObject **kind)
{
    PyObject *env = r->env;
    *data = *kind = NULL;
    PyObject *d = PyObject_CallOneArg(PyTuple_GET_ITEM(env, E_DECODE), raw);
    if (d == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception)) {
            return -1;
        }
        PyErr_Clear();
    }
    else if (PyDict_CheckExact(d)) {
        int deep = 0;
        Py_ssize_t deep_bytes = PyLong_AsSsize_t(PyTuple_GET_ITEM(env, E_DEEP_BYTES));
        if (deep_bytes == -1 && PyErr_Occurred()) {
            Py_DECREF(d);
            return -1;
        }
        if (PyBytes_GET_SIZE(raw) >= deep_bytes) {
            PyObject *args[2] = {d, PyTuple_GET_ITEM(env, E_DEEP)};
            PyObject *res = PyObject_Vectorcall(PyTuple_GET_ITEM(env, E_DEEPER), args, 2, NULL);
            if (res == NULL || (deep = PyObject_IsTrue(res)) < 0) {
                Py_XDECREF(res);
                Py_DECREF(d);
                return -1;
            }
            Py_DECREF(res);
        }
        if (!deep) {
            PyObject *found = PyDict_GetItemWithError(d, k_type);
            PyObject *v = found == NULL ? NULL : PyDict_GetItemWithError(d, k_v);
            if (PyErr_Occurred()) {
                Py_DECREF(d);
                return -1;
            }
            if (found != NULL && PyUnicode_CheckExact(found) && v != NULL && PyLong_CheckExact(v)) {
                /* Compared in C: no Python runs while `found` and `v` are borrowed. */
                long want = PyLong_AsLong(PyTuple_GET_ITEM(env, E_VERSION));
                int overflow = 0;
                long got = PyLong_AsLongAndOverflow(v, &overflow);
                if ((want == -1 || got == -1) && PyErr_Occurred()) {
                    Py_DECREF(d);
                    return -1;
                }
                if (!overflow && got == want) {
                    *data = d;
                    *kind = Py_NewRef(found);
                    return 1;
                }
            }
        }
        Py_DECREF(d);
    }
    else {
        Py_DECREF(d);
    }
    /* Anything msgspec does not vouch for: the standard parser says what it is. */
    PyObject *args[3] = {raw, NULL, NULL};
    args[1] = PyLong_FromSsize_t(n);
    args[2] = PyLong_FromSsize_t(offset);
    PyObject *parsed = NULL;
    if (args[1] != NULL && args[2] != NULL) {
        parsed = PyObject_Vectorcall(PyTuple_GET_ITEM(env, E_PLAIN), args, 3, NULL);
    }
    Py_XDECREF(args[1]);
    Py_XDECREF(args[2]);
    if (parsed == NULL) {
        return -1;
    }
    if (parsed == Py_None) {
        Py_DECREF(parsed);
        return 0;
    }
    r->last_content = n;
    if (PyTuple_CheckExact(parsed) && PyTuple_GET_SIZE(parsed) == 2) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(parsed, 1))) {
            Py_DECREF(parsed);
            PyErr_SetString(PyExc_TypeError, "the plain parser gives (data, type as a string)");
            return -1;
        }
        *data = Py_NewRef(PyTuple_GET_ITEM(parsed, 0));
        *kind = Py_NewRef(PyTuple_GET_ITEM(parsed, 1));
        Py_DECREF(parsed);
        return 1;
    }
    int rc = PyList_Append(PyTuple_GET_ITEM(r->out, O_PROBLEMS), parsed);
    Py_DECREF(parsed);
    return rc < 0 ? -1 : 0;
}

/* One envelope line, parsed: counts, id key, measure, then its type's own reading. */
static int
envelope(Run *r, Py_ssize_t n, PyObject *raw, PyObject *data, PyObject *kind)
{
    PyObject *env = r->env, *out = r->out;
    PyObject *line = NULL, *env_id = NULL, *p = NULL, *v = NULL;
    int ok = -1;
    r->last_content = n;
    r->envelopes++;
    PyObject *types = PyTuple_GET_ITEM(out, O_TYPES);
    PyObject *count = PyDict_GetItemWithError(types, kind);
    if (count == NULL && PyErr_Occurred()) {
        return -1;
    }
    long seen = count == NULL ? 0 : PyLong_AsLong(count);
    if (seen == -1 && PyErr_Occurred()) {
        return -1;
    }
    PyObject *next = PyLong_FromLong(seen + 1);
    if (next == NULL || PyDict_SetItem(types, kind, next) < 0) {
        Py_XDECREF(next);
        return -1;
    }
    Py_DECREF(next);
    line = PyLong_FromSsize_t(n);
    if (line == NULL) {
        goto done;
    }
    if (r->first_envelope == Py_None) {
        PyObject *first = PyTuple_Pack(2, line, kind);
        if (first == NULL) {
            goto done;
        }
        Py_SETREF(r->first_envelope, first);
    }
    env_id = get(data, k_id);
    if (env_id == NULL) {
        goto done;
    }
    int64_t key = 0;
    if (PyUnicode_Check(env_id)) {
        if (key_of(env_id, &key) < 0 || add_i64(&r->keys, key) < 0
            || add_line(&r->key_lines, n) < 0) {
            goto done;
        }
    }
    else {
        Py_SETREF(env_id, Py_NewRef(Py_None));
    }
    p = get(data, k_payload);
    if (p == NULL) {
        goto done;
    }
    if (!PyDict_CheckExact(p)) {
        int m = is_mapping(env, p);
        if (m < 0) {
            goto done;
        }
        if (!m) {
            Py_SETREF(p, Py_NewRef(PyTuple_GET_ITEM(env, E_EMPTY)));
        }
    }
    if (r->measures.obj != NULL) {
        PyObject *args[3] = {kind, p, raw};
        v = PyObject_Vectorcall(PyTuple_GET_ITEM(out, O_MEASURE), args, 3, NULL);
        if (v == NULL) {
            goto done;
        }
        long rows = PyLong_AsLong(v);
        if (rows == -1 && PyErr_Occurred()) {
            goto done;
        }
        if (rows > INT32_MAX || rows < INT32_MIN) {  /* as `measures[i] = rows` raises */
            PyErr_SetString(PyExc_OverflowError, rows > 0
                                                     ? "signed integer is greater than maximum"
                                                     : "signed integer is less than minimum");
            goto done;
        }
        Py_CLEAR(v);
        Py_ssize_t at = n - r->base;
        if (at < 0 || at >= r->measures.len / 4) {
            PyErr_SetString(PyExc_IndexError, "a line outside the batch's measures");
            goto done;
        }
        ((int32_t *)r->measures.buf)[at] = (int32_t)rows;
    }
    if (PyUnicode_CompareWithASCIIString(kind, "message") == 0) {
        ok = message(r, n, line, env_id, key, p);
    }
    else if (PyUnicode_CompareWithASCIIString(kind, "tool-dispatched") == 0) {
        ok = dispatched(r, n, line, env_id, key, p);
    }
    else if (PyUnicode_CompareWithASCIIString(kind, "tool-settled") == 0) {
        ok = settled(r, n, line, p);
    }
    else if (PyUnicode_CompareWithASCIIString(kind, "session-meta") == 0) {
        if (r->meta_line == Py_None) {
            Py_SETREF(r->meta_line, Py_NewRef(line));
        }
        ok = 0;
    }
    else if (PyUnicode_CompareWithASCIIString(kind, "compaction") == 0) {
        v = get(p, k_replaces);
        if (v != NULL) {
            PyObject *through = PyUnicode_Check(v) ? v : Py_None;
            PyObject *items[4] = {PyTuple_GET_ITEM(env, E_EV_COMPACTION), line, through, env_id};
            ok = append_tuple(PyTuple_GET_ITEM(out, O_EVENTS), items, 4);
        }
    }
    else if (PyUnicode_CompareWithASCIIString(kind, "elision") == 0) {
        v = PyObject_CallOneArg(PyTuple_GET_ITEM(env, E_ELISION_ITEMS), p);
        if (v != NULL) {
            PyObject *items[3] = {PyTuple_GET_ITEM(env, E_EV_ELISION), line, v};
            ok = append_tuple(PyTuple_GET_ITEM(out, O_EVENTS), items, 3);
        }
    }
    else {
        ok = 0;
    }
done:
    Py_XDECREF(line);
    Py_XDECREF(env_id);
    Py_XDECREF(p);
    Py_XDECREF(v);
    return ok;
}

static Py_ssize_t
state_int(PyObject *state, Py_ssize_t i)
{
    return PyLong_AsSsize_t(PyList_GET_ITEM(state, i));
}

static int
set_state(PyObject *state, Py_ssize_t i, PyObject *value)
{
    if (value == NULL) {
        return -1;
    }
    return PyList_SetItem(state, i, value); /* steals */
}

PyDoc_STRVAR(map_run_doc,
"map_run(items, first, start, env, out, state, /)\n"
"--\n\n"
"`_map_into` of one run of raw lines: `items` (bytes, without their LF) are\n"
"lines `first`, `first + 1`, ... starting at byte `start`. `env` holds the\n"
"Python rules it calls, `out` the batch's containers, `state` its running\n"
"values (read, then written back).");

static PyObject *
map_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "map_run takes 6 arguments");
        return NULL;
    }
    PyObject *items = args[0], *env = args[3], *out = args[4], *state = args[5];
    if (!PyList_Check(items) || !PyTuple_CheckExact(env) || PyTuple_GET_SIZE(env) != E_FIELDS
        || !PyTuple_CheckExact(out) || PyTuple_GET_SIZE(out) != O_FIELDS
        || !PyList_CheckExact(state) || PyList_GET_SIZE(state) != S_FIELDS) {
        PyErr_SetString(PyExc_TypeError, "map_run: (list, int, int, env, out, state)");
        return NULL;
    }
    Py_ssize_t first = PyLong_AsSsize_t(args[1]);
    Py_ssize_t start = PyLong_AsSsize_t(args[2]);
    if ((first == -1 || start == -1) && PyErr_Occurred()) {
        return NULL;
    }
    Run r;
    memset(&r, 0, sizeof r);
    r.env = env;
    r.out = out;
    r.envelopes = state_int(state, S_ENVELOPES);
    r.last_content = state_int(state, S_LAST_CONTENT);
    r.last_turn = state_int(state, S_LAST_TURN);
    if (PyErr_Occurred()) {
        return NULL;
    }
    r.first_envelope = Py_NewRef(PyList_GET_ITEM(state, S_FIRST_ENVELOPE));
    r.meta_line = Py_NewRef(PyList_GET_ITEM(state, S_META_LINE));
    int failed = 1;
    PyObject *measures = PyTuple_GET_ITEM(out, O_MEASURES);
    if (measures != Py_None) {
        if (PyObject_GetBuffer(measures, &r.measures, PyBUF_WRITABLE | PyBUF_FORMAT) < 0) {
            goto done;
        }
        if (!holds(&r.measures, "i", 4)) {
            PyErr_SetString(PyExc_TypeError, "measures must be array('i')");
            goto done;
        }
        r.base = PyLong_AsSsize_t(PyTuple_GET_ITEM(out, O_BASE));
        if (r.base == -1 && PyErr_Occurred()) {
            goto done;
        }
    }
    if (fold_open(&r.fold, PyTuple_GET_ITEM(out, O_FOLD_NATIVE)) < 0) {
        goto done;
    }
    Py_ssize_t line = first - 1, after = start;
    /* The list is the caller's, and a callback could change it: hold each item. */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *raw = Py_NewRef(PyList_GET_ITEM(items, i));
        line++;
        Py_ssize_t offset = after;
        if (!PyBytes_CheckExact(raw)) {
            Py_DECREF(raw);
            PyErr_SetString(PyExc_TypeError, "map_run reads lines given as bytes");
            goto done;
        }
        after = offset + PyBytes_GET_SIZE(raw) + 1;
        PyObject *data, *kind;
        int rc = parse(&r, raw, line, offset, &data, &kind);
        if (rc == 1) {
            rc = envelope(&r, line, raw, data, kind);
            Py_DECREF(data);
            Py_DECREF(kind);
        }
        Py_DECREF(raw);
        if (rc < 0) {
            goto done;
        }
    }
    if (flush(PyTuple_GET_ITEM(out, O_KEYS), &r.keys) < 0
        || flush(PyTuple_GET_ITEM(out, O_KEY_LINES), &r.key_lines) < 0
        || flush(PyTuple_GET_ITEM(out, O_LINES), &r.lines) < 0
        || flush(PyTuple_GET_ITEM(out, O_RKEYS), &r.rkeys) < 0
        || flush(PyTuple_GET_ITEM(out, O_FLAGS), &r.flags) < 0) {
        goto done;
    }
    if (set_state(state, S_ENVELOPES, PyLong_FromSsize_t(r.envelopes)) < 0
        || set_state(state, S_LAST_CONTENT, PyLong_FromSsize_t(r.last_content)) < 0
        || set_state(state, S_LAST_TURN, PyLong_FromSsize_t(r.last_turn)) < 0
        || set_state(state, S_FIRST_ENVELOPE, Py_NewRef(r.first_envelope)) < 0
        || set_state(state, S_META_LINE, Py_NewRef(r.meta_line)) < 0) {
        goto done;
    }
    failed = 0;
done:
    if (fold_close(&r.fold) < 0) {
        failed = 1;
    }
    if (r.measures.obj != NULL) {
        PyBuffer_Release(&r.measures);
    }
    PyMem_Free(r.keys.data);
    PyMem_Free(r.key_lines.data);
    PyMem_Free(r.lines.data);
    PyMem_Free(r.rkeys.data);
    PyMem_Free(r.flags.data);
    Py_XDECREF(r.first_envelope);
    Py_XDECREF(r.meta_line);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static int
compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

PyDoc_STRVAR(sorted_keys_doc,
"sorted_keys(keys, /)\n"
"--\n\n"
"The native int64 numbers of `keys` (an array('q') or any buffer of them), sorted:\n"
"`LineBatch.seal`'s `sorted(keys)` without an int object for each.");

static PyObject *
sorted_keys(PyObject *module, PyObject *keys)
{
    Py_buffer view;
    if (PyObject_GetBuffer(keys, &view, PyBUF_FORMAT) < 0) {
        return NULL;
    }
    if (!holds(&view, "q", 8)) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "sorted_keys takes int64 numbers");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(view.buf, view.len);
    PyBuffer_Release(&view);
    if (out == NULL) {
        return NULL;
    }
    qsort(PyBytes_AS_STRING(out), (size_t)(PyBytes_GET_SIZE(out) / 8), 8, compare_i64);
    return out;
}

/* One sorted run being merged: its next number and where it ends. */
typedef struct {
    const int64_t *at, *end;
} Cursor;

static void
sift_down(Cursor *heap, Py_ssize_t n, Py_ssize_t i)
{
    for (;;) {
        Py_ssize_t least = i, l = 2 * i + 1, r = l + 1;
        if (l < n && *heap[l].at < *heap[least].at) {
            least = l;
        }
        if (r < n && *heap[r].at < *heap[least].at) {
            least = r;
        }
        if (least == i) {
            return;
        }
        Cursor t = heap[i];
        heap[i] = heap[least];
        heap[least] = t;
        i = least;
    }
}

PyDoc_STRVAR(has_repeats_doc,
"has_repeats(runs, /)\n"
"--\n\n"
"Whether any number occurs twice in `runs`, a list of sorted array('q')s\n"
"(`AnalysisPass.ids_unique`'s question): one merge of them all, in C.");

static PyObject *
has_repeats(PyObject *module, PyObject *runs)
{
    if (!PyList_Check(runs)) {
        PyErr_SetString(PyExc_TypeError, "has_repeats takes a list of sorted int64 arrays");
        return NULL;
    }
    Py_ssize_t k = PyList_GET_SIZE(runs);
    Py_buffer *views = PyMem_Calloc((size_t)(k ? k : 1), sizeof(Py_buffer));
    Cursor *heap = PyMem_Calloc((size_t)(k ? k : 1), sizeof(Cursor));
    PyObject *result = NULL;
    Py_ssize_t held = 0, n = 0;
    if (views == NULL || heap == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (; held < k; held++) {
        if (PyObject_GetBuffer(PyList_GET_ITEM(runs, held), &views[held], PyBUF_FORMAT) < 0) {
            goto done;
        }
        if (!holds(&views[held], "q", 8)) {
            held++;
            PyErr_SetString(PyExc_ValueError, "has_repeats takes int64 numbers");
            goto done;
        }
        const int64_t *at = views[held].buf;
        const int64_t *end = at + views[held].len / 8;
        for (const int64_t *p = at; p + 1 < end; p++) {
            if (p[0] > p[1]) {
                held++;
                PyErr_SetString(PyExc_ValueError, "has_repeats takes sorted runs");
                goto done;
            }
        }
        if (at < end) {
            heap[n].at = at;
            heap[n].end = end;
            n++;
        }
    }
    int repeats = 0;
    for (Py_ssize_t i = n / 2; i-- > 0;) {
        sift_down(heap, n, i);
    }
    int have = 0;
    int64_t last = 0;
    while (n > 0 && !repeats) {
        int64_t v = *heap[0].at;
        if (have && v == last) {
            repeats = 1;
            break;
        }
        have = 1;
        last = v;
        if (++heap[0].at == heap[0].end) {
            heap[0] = heap[--n];
        }
        sift_down(heap, n, 0);
    }
    result = Py_NewRef(repeats ? Py_True : Py_False);
done:
    for (Py_ssize_t i = 0; i < held; i++) {
        PyBuffer_Release(&views[i]);
    }
    PyMem_Free(views);
    PyMem_Free(heap);
    return result;
}

static PyMethodDef map_methods[] = {
    {"has_repeats", has_repeats, METH_O, has_repeats_doc},
    {"map_run", (PyCFunction)(void (*)(void))map_run, METH_FASTCALL, map_run_doc},
    {"sorted_keys", sorted_keys, METH_O, sorted_keys_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef map_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "transcript_view.core._map",
    .m_doc = "The analysis pass's map of raw lines (see core/analysis.py, `_map_into`).",
    .m_size = -1,
    .m_methods = map_methods,
};

static int
intern(PyObject **slot, const char *text)
{
    *slot = PyUnicode_InternFromString(text);
    return *slot == NULL ? -1 : 0;
}

PyMODINIT_FUNC
PyInit__map(void)
{
    if (intern(&k_type, "type") < 0 || intern(&k_v, "v") < 0 || intern(&k_id, "id") < 0
        || intern(&k_payload, "payload") < 0 || intern(&k_role, "role") < 0
        || intern(&k_user, "user") < 0 || intern(&k_sticky, "sticky") < 0
        || intern(&k_sysprompt, "sysprompt") < 0 || intern(&k_depth, "depth") < 0
        || intern(&k_content, "content") < 0 || intern(&k_tool_calls, "tool-calls") < 0
        || intern(&k_tool_call_id, "tool-call-id") < 0 || intern(&k_is_error, "is-error") < 0
        || intern(&k_elided, "[... elided ") < 0
        || intern(&k_arguments_digest, "arguments-digest") < 0
        || intern(&k_arguments, "arguments") < 0 || intern(&k_call_id, "call-id") < 0
        || intern(&k_op_id, "op-id") < 0 || intern(&k_artifact, "artifact") < 0
        || intern(&k_result_digest, "result-digest") < 0
        || intern(&k_replaces, "replaces-through-id") < 0 || intern(&k_get, "get") < 0
        || intern(&k_empty_str, "") < 0
        || intern(&k_hexdigest, "hexdigest") < 0) {
        return NULL;
    }
    k_empty_tuple = PyTuple_New(0);
    if (k_empty_tuple == NULL) {
        return NULL;
    }
    return PyModule_Create(&map_module);
}
