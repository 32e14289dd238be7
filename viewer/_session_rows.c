/*
 * viewer._rows.SessionCounter: the file view's row count of a Claude Code or Codex line,
 * in C (optional; one extension with `_rows.c`, which makes the module).
 *
 * It is `viewer.session_rows.ClaudeRows` or `CodexRows`, statement for statement, for the
 * lines sessions are made of, on the line as `core.transcript.fast_object` decodes it. In
 * Python a Claude Code line took ~15 us, most of a session open's background work; here
 * the decode is most of it. A text is counted here when what its rows depend on is TAB,
 * LF and printable ASCII; a value shown as compact JSON, when that JSON is printable ASCII
 * as far as its rows are counted. Anything else, and every line type or block type not
 * written out below, is the Python count's (`ASK`), which counts every line; the tests
 * hold both to the row builder.
 *
 * The widths, limits, lengths and words come in from Python (`_Rows.spec`), and so do the
 * rules it calls (the decode, the marker finders, the record's sizes, a call's
 * arguments and an output's parts): nothing about how rows are drawn is decided here.
 */

#include "_rows.h"

#include <stddef.h>
#include <string.h>

/* The pieces a session text is drawn as, in `viewer.session_rows.PIECES`' order. */
enum { P_BODY, P_THINKING, P_DIM, P_INPUT, P_RECORD, P_UI, P_REASONING, P_ARGUMENTS, P_COUNT };

/* `_Rows.spec`: five numbers, then (width, limit, collapsed) for each piece. */
enum { SS_BIG, SS_PREVIEW, SS_TAB, SS_FIELD, SS_RECORD, SS_PIECES };
#define SS_FIELDS (SS_PIECES + 3 * P_COUNT)

/* What a JSON walk says besides ASK and ERR: the length reached its cap. */
#define DONE 1

typedef struct {
    long width;     /* cells a row of it holds */
    long limit;     /* rows it shows before it collapses */
    long collapsed; /* rows it shows collapsed */
} Piece;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int codex;
    long big, preview, tab;
    long field;  /* a record's field is shown as itself up to this many characters */
    long record; /* a record that is no object is shown up to this many */
    Piece piece[P_COUNT];
    Py_ssize_t thinking_words, image_words, record_words; /* printable ASCII: their lengths */
    PyObject *decode;    /* raw -> dict | None: `core.transcript.fast_object` */
    PyObject *markers;   /* text -> list: `find_spills` or `find_notices` */
    PyObject *keys;      /* Claude: the envelope keys; Codex: the output item types */
    PyObject *human;     /* Claude: `core.text.human_size` */
    PyObject *arguments; /* Codex: `session_blocks.call_arguments` */
    PyObject *parts;     /* Codex: `codex.output_parts` */
    PyObject *fallback;  /* raw -> rows: the Python count */
} SessionCounter;

static PyObject *k_content, *k_type, *k_message, *k_text, *k_thinking, *k_input, *k_tool_use_result,
    *k_payload, *k_summary, *k_output, *k_empty;

static long
piece_shown(const Piece *pc, long rows)
{
    return shown(rows, pc->limit, pc->collapsed);
}

/*
 * `wrap_count(prefix + s[:end], width, limit + 1)` for a piece, `prefix` being that many
 * cells of printable ASCII: rows of each logical line (LF-separated), TAB expanded to
 * `tab` columns from the line's start as `visible` does, stopping as soon as the rows
 * reach the cap. ASK at anything but TAB, LF and printable ASCII before that.
 */
static long
text_cap(const SessionCounter *c, const Piece *pc, PyObject *s, Py_ssize_t end, Py_ssize_t prefix)
{
    const int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    const long w = pc->width, cap = pc->limit + 1, tab = c->tab;
    long n = 0;                    /* rows of the logical lines before this one */
    Py_ssize_t col = prefix;       /* cells of this one so far */
    Py_ssize_t room = (cap - 1) * w; /* cells it can take before the rows reach the cap */
    for (Py_ssize_t i = 0; i < end; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (ch >= 0x20 && ch < 0x7f) {
            col += 1;
        } else if (ch == '\n') {
            n += col ? (long)((col - 1) / w + 1) : 1;
            if (n >= cap) {
                return cap;
            }
            col = 0;
            room = (cap - n - 1) * w;
            continue;
        } else if (ch == '\t') {
            col += tab - col % tab;
        } else {
            return ASK; /* drawn as a glyph, or cut by cells: the Python count's */
        }
        if (col > room) {
            return cap; /* this line alone takes the rows left */
        }
    }
    n += col ? (long)((col - 1) / w + 1) : 1;
    return n < cap ? n : cap;
}

/* Rows `RowBuilder.text` shows `prefix` cells then the string `s` in, at piece `pc`. */
static long
text_rows_at(const SessionCounter *c, int p, PyObject *s, Py_ssize_t prefix)
{
    const Piece *pc = &c->piece[p];
    long rows = text_cap(c, pc, s, PyUnicode_GET_LENGTH(s), prefix);
    return rows < 0 ? rows : piece_shown(pc, rows);
}

/* Rows of one logical line of `len` cells of printable ASCII, capped. */
static long
line_cap(const Piece *pc, Py_ssize_t len)
{
    const long cap = pc->limit + 1;
    Py_ssize_t rows = len ? (len - 1) / pc->width + 1 : 1;
    return rows < cap ? (long)rows : cap;
}

typedef struct {
    Py_ssize_t n;   /* characters of compact JSON so far */
    Py_ssize_t cap; /* where the walk may stop */
} Json;

/* A JSON string's length as `json.dumps(ensure_ascii=False)` writes it; ASK at a character
 * written as itself that is not printable ASCII. */
static int
json_str(Json *j, PyObject *s)
{
    const int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    const Py_ssize_t len = PyUnicode_GET_LENGTH(s);
    j->n += 1;
    for (Py_ssize_t i = 0; i < len; i++) {
        if (j->n >= j->cap) {
            return DONE;
        }
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (ch == '"' || ch == '\\') {
            j->n += 2;
        } else if (ch >= 0x20 && ch < 0x7f) {
            j->n += 1;
        } else if (ch < 0x20) {
            j->n += (ch == '\b' || ch == '\f' || ch == '\n' || ch == '\r' || ch == '\t') ? 2 : 6;
        } else {
            return ASK; /* DEL or beyond ASCII, written as itself */
        }
    }
    j->n += 1;
    return j->n >= j->cap ? DONE : 0;
}

static int json_value(Json *j, PyObject *v, int depth);

/* `compact_json`'s object (keys sorted), without the keys in `skip` (a set, or NULL). */
static int
json_dict(Json *j, PyObject *d, PyObject *skip, int depth)
{
    PyObject *keys = PyDict_Keys(d);
    if (keys == NULL) {
        return ERR;
    }
    int r = PyList_Sort(keys) < 0 ? ERR : 0;
    if (r == ERR) {
        PyErr_Clear(); /* keys json cannot sort: `compact_json` falls back to repr */
        r = ASK;
    }
    int first = 1;
    j->n += 1;
    for (Py_ssize_t i = 0; r == 0 && i < PyList_GET_SIZE(keys); i++) {
        PyObject *key = PyList_GET_ITEM(keys, i);
        if (!PyUnicode_CheckExact(key)) {
            r = ASK;
            break;
        }
        if (skip != NULL) {
            int in = PySet_Contains(skip, key);
            if (in < 0) {
                r = ERR;
                break;
            }
            if (in) {
                continue;
            }
        }
        j->n += first ? 0 : 1;
        first = 0;
        if (j->n >= j->cap) {
            r = DONE;
            break;
        }
        r = json_str(j, key);
        if (r != 0) {
            break;
        }
        j->n += 1; /* ":" */
        PyObject *v = PyDict_GetItemWithError(d, key);
        if (v == NULL) {
            r = PyErr_Occurred() ? ERR : ASK;
            break;
        }
        r = json_value(j, v, depth + 1);
    }
    Py_DECREF(keys);
    if (r == 0) {
        j->n += 1;
        r = j->n >= j->cap ? DONE : 0;
    }
    return r;
}

/* Characters of `v`'s compact JSON up to the cap (`compact_json`), for decoded JSON. */
static int
json_value(Json *j, PyObject *v, int depth)
{
    if (j->n >= j->cap) {
        return DONE;
    }
    if (depth > 200) {
        return ASK;
    }
    if (PyUnicode_CheckExact(v)) {
        return json_str(j, v);
    }
    if (v == Py_None || v == Py_True) {
        j->n += 4;
    } else if (v == Py_False) {
        j->n += 5;
    } else if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow) {
            PyObject *text = PyObject_Str(v);
            if (text == NULL) {
                PyErr_Clear(); /* past int's digit limit: `compact_json` says what */
                return ASK;
            }
            j->n += PyUnicode_GET_LENGTH(text);
            Py_DECREF(text);
        } else {
            if (x == -1 && PyErr_Occurred()) {
                return ERR;
            }
            unsigned long long u = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
            j->n += x < 0;
            do {
                j->n += 1;
                u /= 10;
            } while (u);
        }
    } else if (PyFloat_CheckExact(v)) {
        double x = PyFloat_AS_DOUBLE(v);
        if (x != x || x - x != 0.0) {
            return ASK; /* NaN, Infinity: not from a decoded line */
        }
        PyObject *text = PyObject_Repr(v);
        if (text == NULL) {
            return ERR;
        }
        j->n += PyUnicode_GET_LENGTH(text);
        Py_DECREF(text);
    } else if (PyList_CheckExact(v)) {
        j->n += 1;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); i++) {
            j->n += i > 0;
            int r = json_value(j, PyList_GET_ITEM(v, i), depth + 1);
            if (r != 0) {
                return r;
            }
        }
        j->n += 1;
    } else if (PyDict_CheckExact(v)) {
        return json_dict(j, v, NULL, depth);
    } else {
        return ASK;
    }
    return j->n >= j->cap ? DONE : 0;
}

/*
 * Characters of `clip(v)` up to `cap` (at most `cap`), for a value that is not a string;
 * `skip` leaves keys out of a top-level object. ASK where the rows depend on more.
 */
static Py_ssize_t
clip_len(const SessionCounter *c, PyObject *v, PyObject *skip, Py_ssize_t cap)
{
    /* Past `preview` characters the clip ends " …": counted only where cut before it. */
    Json j = {0, cap <= c->preview ? cap : c->preview + 1};
    int r = PyDict_CheckExact(v) ? json_dict(&j, v, skip, 0) : json_value(&j, v, 0);
    if (r < 0) {
        return r;
    }
    if (j.n > c->preview && cap > c->preview) {
        return ASK;
    }
    return j.n < cap ? j.n : cap;
}

/* `text_cap` of `prefix` cells then `clip(s)[:cut]` for a string `s`. */
static long
clip_text_cap(const SessionCounter *c, const Piece *pc, PyObject *s, Py_ssize_t cut,
              Py_ssize_t prefix)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(s);
    Py_ssize_t end = len <= c->preview ? len : c->preview;
    end = end <= cut ? end : cut;
    long rows = text_cap(c, pc, s, end, prefix);
    if (rows >= 0 && rows <= pc->limit && end < len && end < cut) {
        return ASK; /* the clip's " …" is on the rows shown */
    }
    return rows;
}

/* Rows `RowBuilder.text` shows `clip(v)` in at piece `p`; `skip` as for `clip_len`. */
static long
clip_rows(const SessionCounter *c, int p, PyObject *v, PyObject *skip)
{
    const Piece *pc = &c->piece[p];
    const Py_ssize_t cap = (Py_ssize_t)(pc->limit + 1) * pc->width; /* enough to say "more" */
    if (PyUnicode_CheckExact(v)) {
        long rows = clip_text_cap(c, pc, v, PY_SSIZE_T_MAX, 0);
        return rows < 0 ? rows : piece_shown(pc, rows);
    }
    Py_ssize_t len = clip_len(c, v, skip, cap);
    return len < 0 ? (long)len : piece_shown(pc, line_cap(pc, len));
}

/* Borrowed `d[key]` of an exact dict, NULL if absent (*err on a Python error). */
#define GET(d, key) item((d), (key), &err)

/* `repr(s)`'s length for a string of printable ASCII, TAB, LF and CR; ASK for any other. */
static Py_ssize_t
repr_len(PyObject *s)
{
    if (!PyUnicode_IS_ASCII(s)) {
        return ASK;
    }
    const Py_UCS1 *d = PyUnicode_1BYTE_DATA(s);
    Py_ssize_t len = PyUnicode_GET_LENGTH(s), extra = 0, single = 0, dbl = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        switch (d[i]) {
        case '\\': case '\t': case '\n': case '\r':
            extra += 1;
            break;
        case '\'':
            single += 1;
            break;
        case '"':
            dbl += 1;
            break;
        default:
            if (d[i] < 0x20 || d[i] == 0x7f) {
                return ASK;
            }
        }
    }
    /* Quoted with ' unless it holds ' and no ": then each ' is escaped where there are both. */
    return len + 2 + extra + (single && dbl ? single : 0);
}

/* Length of a string that must be printable ASCII, else ASK. */
static Py_ssize_t
ascii_len(PyObject *s)
{
    if (!PyUnicode_IS_ASCII(s)) {
        return ASK;
    }
    const Py_UCS1 *d = PyUnicode_1BYTE_DATA(s);
    Py_ssize_t len = PyUnicode_GET_LENGTH(s);
    for (Py_ssize_t i = 0; i < len; i++) {
        if (d[i] < 0x20 || d[i] == 0x7f) {
            return ASK;
        }
    }
    return len;
}

/* Rows of Claude Code's own record of a call: `TOOL_USE_RESULT_WORDS + tool_use_summary(v)`. */
static long
record_rows(const SessionCounter *c, PyObject *v)
{
    const Piece *pc = &c->piece[P_RECORD];
    const Py_ssize_t cap = (Py_ssize_t)(pc->limit + 1) * pc->width;
    Py_ssize_t len = c->record_words;
    if (PyUnicode_CheckExact(v)) { /* `clip(v)[:RECORD_TEXT_CHARS]` */
        long rows = clip_text_cap(c, pc, v, c->record, len);
        return rows < 0 ? rows : piece_shown(pc, rows);
    }
    if (!PyDict_CheckExact(v)) {
        Py_ssize_t n = clip_len(c, v, NULL, c->record);
        return n < 0 ? (long)n : piece_shown(pc, line_cap(pc, len + n));
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    int first = 1;
    while (len < cap && PyDict_Next(v, &pos, &key, &value)) {
        Py_ssize_t k = PyUnicode_CheckExact(key) ? ascii_len(key) : ASK;
        if (k < 0) {
            return (long)k;
        }
        len += (first ? 0 : 2) + k + 1; /* ", ", the key, " " */
        first = 0;
        Py_ssize_t n;
        if (PyUnicode_CheckExact(value) && PyUnicode_GET_LENGTH(value) > c->field) {
            Py_ssize_t bytes;
            if (PyUnicode_IS_ASCII(value)) {
                bytes = PyUnicode_GET_LENGTH(value);
            } else if (PyUnicode_AsUTF8AndSize(value, &bytes) == NULL) {
                PyErr_Clear();
                return ASK; /* a lone surrogate: not from a decoded line */
            }
            PyObject *size = PyLong_FromSsize_t(bytes);
            if (size == NULL) {
                return ERR;
            }
            Py_INCREF(value);
            PyObject *said = PyObject_CallOneArg(c->human, size);
            Py_DECREF(size);
            Py_DECREF(value);
            if (said == NULL) {
                return ERR;
            }
            n = PyUnicode_Check(said) ? ascii_len(said) : ASK;
            Py_DECREF(said);
        } else if (PyUnicode_CheckExact(value)) {
            n = repr_len(value);
        } else {
            n = clip_len(c, value, NULL, c->field); /* `clip(item)[:RECORD_FIELD_CHARS]` */
        }
        if (n < 0) {
            return (long)n;
        }
        len += n;
    }
    return piece_shown(pc, line_cap(pc, len));
}

/* `ClaudeRows._content`: rows of a message's content, for a line of type user or not. */
static long
claude_content(const SessionCounter *c, PyObject *content, int user)
{
    int err = 0;
    if (content == NULL) {
        return 0;
    }
    if (PyUnicode_CheckExact(content)) {
        return text_rows_at(c, P_BODY, content, 0);
    }
    if (!PyList_Check(content)) {
        return 0;
    }
    if (!PyList_CheckExact(content)) {
        return ASK;
    }
    long rows = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(content); i++) {
        PyObject *block = PyList_GET_ITEM(content, i);
        long add;
        if (!PyDict_CheckExact(block)) {
            add = clip_rows(c, P_DIM, block, NULL);
            if (add < 0) {
                return add;
            }
            rows += add;
            continue;
        }
        PyObject *btype = GET(block, k_type);
        if (err) {
            return ERR;
        }
        if (btype == NULL || !PyUnicode_CheckExact(btype)) {
            return ASK;
        }
        if (PyUnicode_CompareWithASCIIString(btype, "text") == 0) {
            PyObject *text = GET(block, k_text);
            if (err) {
                return ERR;
            }
            if (text != NULL && !PyUnicode_CheckExact(text)) {
                return ASK;
            }
            add = text_rows_at(c, P_BODY, text != NULL ? text : k_empty, 0);
        } else if (PyUnicode_CompareWithASCIIString(btype, "thinking") == 0) {
            PyObject *text = GET(block, k_thinking);
            if (err) {
                return ERR;
            }
            if (text != NULL && !PyUnicode_CheckExact(text)) {
                return ASK;
            }
            add = text_rows_at(c, P_THINKING, text != NULL ? text : k_empty, c->thinking_words);
        } else if (PyUnicode_CompareWithASCIIString(btype, "tool_use") == 0) {
            PyObject *input = GET(block, k_input);
            if (err) {
                return ERR;
            }
            if (input == NULL) {
                add = 1 + piece_shown(&c->piece[P_INPUT], line_cap(&c->piece[P_INPUT], 2)); /* {} */
            } else {
                add = clip_rows(c, P_INPUT, input, NULL);
                add = add < 0 ? add : 1 + add;
            }
        } else if (PyUnicode_CompareWithASCIIString(btype, "tool_result") == 0) {
            PyObject *inner = GET(block, k_content);
            if (err) {
                return ERR;
            }
            const int one = inner != NULL && PyUnicode_CheckExact(inner);
            Py_ssize_t n = 0;
            if (one) {
                n = 1;
            } else if (inner != NULL && PyList_CheckExact(inner)) {
                n = PyList_GET_SIZE(inner);
            } else if (inner != NULL && inner != Py_None) {
                return ASK; /* read oddly by the builder: the Python count's */
            }
            add = 1;
            for (Py_ssize_t j = 0; j < n; j++) {
                PyObject *part = one ? inner : PyList_GET_ITEM(inner, j), *text = NULL;
                if (PyUnicode_CheckExact(part)) {
                    text = part;
                } else if (PyDict_CheckExact(part)) {
                    PyObject *ptype = GET(part, k_type);
                    if (err) {
                        return ERR;
                    }
                    if (ptype != NULL && PyUnicode_CheckExact(ptype)) {
                        if (PyUnicode_CompareWithASCIIString(ptype, "image") == 0) {
                            add += piece_shown(&c->piece[P_DIM],
                                               line_cap(&c->piece[P_DIM], c->image_words));
                            continue;
                        }
                        if (PyUnicode_CompareWithASCIIString(ptype, "text") == 0) {
                            text = GET(part, k_text);
                            if (err) {
                                return ERR;
                            }
                            text = text != NULL && PyUnicode_CheckExact(text) ? text : NULL;
                        }
                    }
                }
                if (text == NULL) {
                    continue;
                }
                if (user) { /* where the analysis looks for markers: a marker row is its */
                    Py_INCREF(text);
                    PyObject *found = PyObject_CallOneArg(c->markers, text);
                    Py_DECREF(text);
                    if (found == NULL) {
                        return ERR;
                    }
                    int any = PyObject_IsTrue(found);
                    Py_DECREF(found);
                    if (any != 0) {
                        return any < 0 ? ERR : ASK;
                    }
                }
                long more = text_rows_at(c, P_BODY, text, 0);
                if (more < 0) {
                    return more;
                }
                add += more;
            }
        } else if (PyUnicode_CompareWithASCIIString(btype, "image") == 0) {
            add = piece_shown(&c->piece[P_DIM], line_cap(&c->piece[P_DIM], c->image_words));
        } else {
            return ASK;
        }
        if (add < 0) {
            return add;
        }
        rows += add;
    }
    return rows;
}

/* `ClaudeRows.__call__` on the decoded line. */
static long
claude_rows(const SessionCounter *c, PyObject *obj)
{
    int err = 0;
    PyObject *kind = GET(obj, k_type);
    if (err) {
        return ERR;
    }
    int user = 0;
    if (kind != NULL && PyUnicode_CheckExact(kind)) {
        user = PyUnicode_CompareWithASCIIString(kind, "user") == 0;
        if (!user && PyUnicode_CompareWithASCIIString(kind, "assistant") != 0) {
            if (PyUnicode_CompareWithASCIIString(kind, "system") == 0
                || PyUnicode_CompareWithASCIIString(kind, "summary") == 0
                || PyUnicode_CompareWithASCIIString(kind, "content-replacement") == 0) {
                return ASK;
            }
            kind = NULL; /* another line type: what it holds besides the envelope */
        }
    } else {
        kind = NULL;
    }
    if (kind == NULL) {
        long rows = clip_rows(c, P_DIM, obj, c->keys);
        return rows < 0 ? rows : 1 + rows;
    }
    PyObject *message = GET(obj, k_message), *content = NULL;
    if (err) {
        return ERR;
    }
    if (message != NULL && PyDict_CheckExact(message)) {
        content = GET(message, k_content);
        if (err) {
            return ERR;
        }
    }
    long rows = claude_content(c, content, user);
    if (rows < 0) {
        return rows;
    }
    rows += 1;
    PyObject *record = GET(obj, k_tool_use_result);
    if (err) {
        return ERR;
    }
    if (record != NULL) {
        long more = record_rows(c, record);
        if (more < 0) {
            return more;
        }
        rows += more;
    }
    return rows;
}

/* Rows of the `text` of each item of a Codex content or summary list (`texts_of`). */
static long
codex_texts(const SessionCounter *c, int p, PyObject *items)
{
    int err = 0;
    if (items == NULL || !PyList_CheckExact(items)) {
        return items == NULL || !PyList_Check(items) ? 0 : ASK;
    }
    long rows = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *it = PyList_GET_ITEM(items, i);
        if (!PyDict_CheckExact(it)) {
            continue; /* decoded JSON: no other value is a Mapping */
        }
        PyObject *text = GET(it, k_text);
        if (err) {
            return ERR;
        }
        if (text == NULL || !PyUnicode_Check(text)) {
            continue;
        }
        long more = text_rows_at(c, p, text, 0);
        if (more < 0) {
            return more;
        }
        rows += more;
    }
    return rows;
}

/* `CodexRows._item`: rows of a response item. */
static long
codex_item(const SessionCounter *c, PyObject *entry)
{
    int err = 0;
    PyObject *itype = GET(entry, k_type);
    if (err) {
        return ERR;
    }
    if (itype == NULL || !PyUnicode_CheckExact(itype)) {
        long rows = clip_rows(c, P_DIM, entry, NULL);
        return rows < 0 ? rows : 1 + rows;
    }
    if (PyUnicode_CompareWithASCIIString(itype, "message") == 0) {
        PyObject *content = GET(entry, k_content);
        long rows = err ? ERR : codex_texts(c, P_BODY, content);
        return rows < 0 ? rows : 1 + rows;
    }
    if (PyUnicode_CompareWithASCIIString(itype, "reasoning") == 0) {
        PyObject *summary = GET(entry, k_summary);
        long rows = err ? ERR : codex_texts(c, P_REASONING, summary);
        return rows < 0 ? rows : 1 + rows;
    }
    if (PyUnicode_CompareWithASCIIString(itype, "function_call") == 0
        || PyUnicode_CompareWithASCIIString(itype, "custom_tool_call") == 0
        || PyUnicode_CompareWithASCIIString(itype, "local_shell_call") == 0) {
        PyObject *args = PyObject_CallOneArg(c->arguments, entry);
        if (args == NULL) {
            return ERR;
        }
        long rows = clip_rows(c, P_ARGUMENTS, args, NULL);
        Py_DECREF(args);
        return rows < 0 ? rows : 1 + rows;
    }
    int output = PySet_Contains(c->keys, itype);
    if (output < 0) {
        return ERR;
    }
    if (!output) {
        long rows = clip_rows(c, P_DIM, entry, NULL);
        return rows < 0 ? rows : 1 + rows;
    }
    PyObject *out = GET(entry, k_output);
    if (err) {
        return ERR;
    }
    PyObject *parts = PyObject_CallOneArg(c->parts, out != NULL ? out : Py_None);
    if (parts == NULL) {
        return ERR;
    }
    PyObject *it = PyObject_GetIter(parts);
    Py_DECREF(parts);
    if (it == NULL) {
        return ERR;
    }
    long rows = 1;
    PyObject *part;
    while (rows >= 0 && (part = PyIter_Next(it)) != NULL) {
        PyObject *text = PyTuple_Check(part) && PyTuple_GET_SIZE(part) == 3
                             ? PyTuple_GET_ITEM(part, 2)
                             : NULL;
        if (text == NULL || !PyUnicode_CheckExact(text)) {
            rows = ASK;
        } else {
            PyObject *found = PyObject_CallOneArg(c->markers, text);
            int any = found == NULL ? -1 : PyObject_IsTrue(found);
            Py_XDECREF(found);
            if (any != 0) {
                rows = any < 0 ? ERR : ASK; /* a notice: its badge is the analysis's */
            } else {
                long more = text_rows_at(c, P_BODY, text, 0);
                rows = more < 0 ? more : rows + more;
            }
        }
        Py_DECREF(part);
    }
    Py_DECREF(it);
    if (rows >= 0 && PyErr_Occurred()) {
        rows = ERR;
    }
    return rows;
}

/* `CodexRows.__call__` on the decoded line. */
static long
codex_rows(const SessionCounter *c, PyObject *obj)
{
    int err = 0;
    PyObject *kind = GET(obj, k_type), *payload = NULL;
    if (!err) {
        payload = GET(obj, k_payload);
    }
    if (err) {
        return ERR;
    }
    if (payload != NULL && !PyDict_CheckExact(payload)) {
        payload = NULL;
    }
    if (kind != NULL && PyUnicode_CheckExact(kind)) {
        if (PyUnicode_CompareWithASCIIString(kind, "response_item") == 0) {
            if (payload == NULL) {
                return ASK;
            }
            return codex_item(c, payload);
        }
        if (PyUnicode_CompareWithASCIIString(kind, "event_msg") == 0) {
            PyObject *msg = payload != NULL ? GET(payload, k_message) : NULL;
            if (err) {
                return ERR;
            }
            if (msg == NULL || !PyUnicode_Check(msg) || PyUnicode_GET_LENGTH(msg) == 0) {
                return 1;
            }
            if (!PyUnicode_CheckExact(msg)) {
                return ASK;
            }
            long rows = text_rows_at(c, P_UI, msg, 0);
            return rows < 0 ? rows : 1 + rows;
        }
        if (PyUnicode_CompareWithASCIIString(kind, "turn_context") == 0) {
            return 1;
        }
        if (PyUnicode_CompareWithASCIIString(kind, "session_meta") == 0
            || PyUnicode_CompareWithASCIIString(kind, "compacted") == 0) {
            return ASK;
        }
    }
    if (payload == NULL) {
        return ASK;
    }
    long rows = clip_rows(c, P_DIM, payload, NULL);
    return rows < 0 ? rows : 1 + rows;
}

static PyObject *
session_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    SessionCounter *c = (SessionCounter *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_SetString(PyExc_TypeError, "SessionCounter(raw) takes 1 argument");
        return NULL;
    }
    PyObject *raw = args[0];
    long rows = ASK;
    if (PyBytes_Check(raw)) {
        if (PyBytes_GET_SIZE(raw) >= c->big) {
            return PyLong_FromLong(UNKNOWN); /* shown in part by the builder */
        }
        PyObject *obj = PyObject_CallOneArg(c->decode, raw);
        if (obj == NULL) {
            return NULL;
        }
        if (obj == Py_None) {
            rows = UNKNOWN; /* the standard parser decides: the builder's */
        } else if (PyDict_CheckExact(obj)) {
            rows = c->codex ? codex_rows(c, obj) : claude_rows(c, obj);
        }
        Py_DECREF(obj);
    }
    return answer(rows, c->fallback, args, nargs);
}

/* A helper named `name` in the `helpers` dict, new reference; NULL (error set) if absent. */
static PyObject *
helper(PyObject *helpers, const char *name, int callable)
{
    PyObject *v = PyDict_GetItemString(helpers, name);
    if (v == NULL || (callable && !PyCallable_Check(v)) || (!callable && !PyAnySet_Check(v))) {
        PyErr_Format(PyExc_TypeError, "helpers['%s'] must be a %s", name,
                     callable ? "callable" : "set");
        return NULL;
    }
    Py_INCREF(v);
    return v;
}

/* A word the count adds the length of: printable ASCII, else ValueError. */
static Py_ssize_t
word_len(PyObject *words, Py_ssize_t i)
{
    PyObject *w = PyTuple_GET_ITEM(words, i);
    Py_ssize_t n = PyUnicode_CheckExact(w) ? ascii_len(w) : ASK;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "words must be strings of printable ASCII");
    }
    return n;
}

static PyObject *
session_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    const char *fmt;
    PyObject *spec, *words, *helpers, *fallback;
    static char *names[] = {"format", "spec", "words", "helpers", "fallback", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "sOO!O!O:SessionCounter", names, &fmt, &spec,
                                     &PyTuple_Type, &words, &PyDict_Type, &helpers, &fallback)) {
        return NULL;
    }
    int codex = strcmp(fmt, "codex") == 0;
    if (!codex && strcmp(fmt, "claude-code") != 0) {
        return PyErr_Format(PyExc_ValueError, "no session count for format %s", fmt);
    }
    if (PyTuple_GET_SIZE(words) != 3) {
        PyErr_SetString(PyExc_ValueError, "words must be (thinking, image, record)");
        return NULL;
    }
    if (!PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "fallback must be callable");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(spec, "spec must be a sequence of ints");
    if (seq == NULL) {
        return NULL;
    }
    if (PySequence_Fast_GET_SIZE(seq) != SS_FIELDS) {
        Py_DECREF(seq);
        return PyErr_Format(PyExc_ValueError, "spec must hold %d ints", SS_FIELDS);
    }
    long v[SS_FIELDS];
    for (int i = 0; i < SS_FIELDS; i++) {
        v[i] = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return NULL;
        }
        if (v[i] < 1 || v[i] > (1L << 30)) {
            Py_DECREF(seq);
            return PyErr_Format(PyExc_ValueError, "spec[%d] must be from 1 to 2**30", i);
        }
    }
    Py_DECREF(seq);
    SessionCounter *c = (SessionCounter *)type->tp_alloc(type, 0);
    if (c == NULL) {
        return NULL;
    }
    c->codex = codex;
    c->big = v[SS_BIG];
    c->preview = v[SS_PREVIEW];
    c->tab = v[SS_TAB];
    c->field = v[SS_FIELD];
    c->record = v[SS_RECORD];
    for (int p = 0; p < P_COUNT; p++) {
        c->piece[p].width = v[SS_PIECES + 3 * p];
        c->piece[p].limit = v[SS_PIECES + 3 * p + 1];
        c->piece[p].collapsed = v[SS_PIECES + 3 * p + 2];
    }
    c->thinking_words = word_len(words, 0);
    c->image_words = word_len(words, 1);
    c->record_words = word_len(words, 2);
    if (c->thinking_words < 0 || c->image_words < 0 || c->record_words < 0) {
        Py_DECREF(c);
        return NULL;
    }
    Py_INCREF(fallback);
    c->fallback = fallback;
    c->decode = helper(helpers, "decode", 1);
    c->markers = c->decode ? helper(helpers, "markers", 1) : NULL;
    c->keys = c->markers ? helper(helpers, "keys", 0) : NULL;
    if (c->keys != NULL && !codex) {
        c->human = helper(helpers, "human_size", 1);
    } else if (c->keys != NULL) {
        c->arguments = helper(helpers, "arguments", 1);
        c->parts = c->arguments ? helper(helpers, "parts", 1) : NULL;
    }
    if (c->keys == NULL || (codex ? c->parts == NULL : c->human == NULL)) {
        Py_DECREF(c);
        return NULL;
    }
    c->vectorcall = session_vectorcall;
    return (PyObject *)c;
}

static int
session_traverse(SessionCounter *c, visitproc visit, void *arg)
{
    Py_VISIT(c->decode);
    Py_VISIT(c->markers);
    Py_VISIT(c->keys);
    Py_VISIT(c->human);
    Py_VISIT(c->arguments);
    Py_VISIT(c->parts);
    Py_VISIT(c->fallback);
    return 0;
}

static int
session_clear(SessionCounter *c)
{
    Py_CLEAR(c->decode);
    Py_CLEAR(c->markers);
    Py_CLEAR(c->keys);
    Py_CLEAR(c->human);
    Py_CLEAR(c->arguments);
    Py_CLEAR(c->parts);
    Py_CLEAR(c->fallback);
    return 0;
}

static void
session_dealloc(SessionCounter *c)
{
    PyObject_GC_UnTrack(c);
    session_clear(c);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

PyDoc_STRVAR(session_doc,
"SessionCounter(format, spec, words, helpers, fallback)\n"
"--\n"
"\n"
"A `core.formats.batches.LineMeasure` for a Claude Code or Codex session\n"
"(`format`): raw -> rows of the line in the file view's plain look, counted\n"
"here for the common lines; any other line is `fallback(raw)`. `spec` is\n"
"`viewer.session_rows._Rows.spec`, `words` (thinking, image, record) and\n"
"`helpers` are what `viewer.session_rows.session_measure` hands in.");

PyTypeObject SessionCounterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "transcript_view.viewer._rows.SessionCounter",
    .tp_doc = session_doc,
    .tp_basicsize = sizeof(SessionCounter),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = session_new,
    .tp_dealloc = (destructor)session_dealloc,
    .tp_traverse = (traverseproc)session_traverse,
    .tp_clear = (inquiry)session_clear,
    .tp_vectorcall_offset = offsetof(SessionCounter, vectorcall),
    .tp_call = PyVectorcall_Call,
};

int
session_rows_ready(void)
{
    if (intern(&k_content, "content") < 0 || intern(&k_type, "type") < 0
        || intern(&k_message, "message") < 0 || intern(&k_text, "text") < 0
        || intern(&k_thinking, "thinking") < 0 || intern(&k_input, "input") < 0
        || intern(&k_tool_use_result, "toolUseResult") < 0 || intern(&k_payload, "payload") < 0
        || intern(&k_summary, "summary") < 0 || intern(&k_output, "output") < 0
        || intern(&k_empty, "") < 0) {
        return -1;
    }
    return PyType_Ready(&SessionCounterType);
}
