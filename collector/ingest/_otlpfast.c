/* A fast path for decoding OTLP ExportTraceServiceRequest protobuf bodies (the collector's ingest hot path).
 *
 * decode(body, max_attribute_bytes) reads the protobuf wire format directly and returns one tuple per span
 * (see collector/_otlpfast.pyi), or None whenever the request is not plain and valid: the caller then takes
 * the exact upb path (parse_request + decode_traces), which gives the right answer or the right error. So
 * this decoder may refuse anything it is not sure about; it must only never accept something the upb path
 * would decode differently, and never read outside the body.
 *
 * Every parse function returns OK, FALLBACK (the answer is None) or ERROR (a Python exception is set).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define OK 0
#define FALLBACK 1
#define ERROR (-1)
#define MAX_DEPTH 32

/* Wire types. */
#define WT_VARINT 0
#define WT_I64 1
#define WT_LEN 2
#define WT_I32 5

/* Attribute keys repeat across the spans of a request: one str per distinct key, for the whole call. */
#define KEY_CACHE_SIZE 1024
#define KEY_CACHE_MAX_BYTES 40

typedef struct {
    const uint8_t *data; /* inside the body, which outlives the call */
    Py_ssize_t size;
    PyObject *text;
} KeyEntry;

typedef struct {
    Py_ssize_t limit; /* max_attribute_bytes: longer strings and bytes values fall back */
    KeyEntry keys[KEY_CACHE_SIZE];
} Ctx;

typedef struct {
    uint32_t number;
    int wire_type;
    uint64_t value;      /* WT_VARINT, WT_I64, WT_I32 */
    const uint8_t *data; /* WT_LEN */
    Py_ssize_t size;     /* WT_LEN */
} Field;

typedef struct {
    const uint8_t *data;
    Py_ssize_t size;
    int present;
} Slice;

static int read_varint(const uint8_t **pos, const uint8_t *end, uint64_t *out) {
    const uint8_t *p = *pos;
    uint64_t value = 0;
    for (int i = 0; i < 10; i++) {
        if (p >= end) {
            return FALLBACK;
        }
        uint8_t byte = *p++;
        if (i == 9 && byte > 1) {
            return FALLBACK; /* more than 64 bits */
        }
        value |= (uint64_t)(byte & 0x7f) << (7 * i);
        if (!(byte & 0x80)) {
            *pos = p;
            *out = value;
            return OK;
        }
    }
    return FALLBACK;
}

/* Reads one field (tag and payload) at *pos, never past end. */
static int next_field(const uint8_t **pos, const uint8_t *end, Field *field) {
    uint64_t tag, size;
    const uint8_t *p = *pos;
    if (read_varint(&p, end, &tag) != OK || tag > UINT32_MAX || (tag >> 3) == 0) {
        return FALLBACK;
    }
    field->number = (uint32_t)(tag >> 3);
    field->wire_type = (int)(tag & 7);
    switch (field->wire_type) {
    case WT_VARINT:
        if (read_varint(&p, end, &field->value) != OK) {
            return FALLBACK;
        }
        break;
    case WT_I64:
        if (end - p < 8) {
            return FALLBACK;
        }
        field->value = 0;
        for (int i = 7; i >= 0; i--) {
            field->value = (field->value << 8) | p[i];
        }
        p += 8;
        break;
    case WT_I32:
        if (end - p < 4) {
            return FALLBACK;
        }
        field->value = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
        p += 4;
        break;
    case WT_LEN:
        if (read_varint(&p, end, &size) != OK || size > (uint64_t)(end - p)) {
            return FALLBACK;
        }
        field->data = p;
        field->size = (Py_ssize_t)size;
        p += size;
        break;
    default: /* groups (3, 4) and the invalid wire types 6, 7 */
        return FALLBACK;
    }
    *pos = p;
    return OK;
}

#define NEXT(p, end, f)                                                                                       \
    do {                                                                                                      \
        if (next_field(&(p), (end), &(f)) != OK) {                                                            \
            return FALLBACK;                                                                                  \
        }                                                                                                     \
    } while (0)
#define EXPECT(f, wt)                                                                                         \
    do {                                                                                                      \
        if ((f).wire_type != (wt)) {                                                                          \
            return FALLBACK;                                                                                  \
        }                                                                                                     \
    } while (0)
/* A singular field seen twice: upb keeps the last scalar and merges messages; refuse both. */
#define ONCE(slice, f)                                                                                        \
    do {                                                                                                      \
        if ((slice).present) {                                                                                \
            return FALLBACK;                                                                                  \
        }                                                                                                     \
        (slice).present = 1;                                                                                  \
        (slice).data = (f).data;                                                                              \
        (slice).size = (f).size;                                                                              \
    } while (0)
#define CHECK(call)                                                                                           \
    do {                                                                                                      \
        int rc_ = (call);                                                                                     \
        if (rc_ != OK) {                                                                                      \
            return rc_;                                                                                       \
        }                                                                                                     \
    } while (0)

/* A str from UTF-8 bytes; invalid UTF-8 (which upb refuses too) falls back. */
static int make_str(const uint8_t *data, Py_ssize_t size, PyObject **out) {
    PyObject *text = PyUnicode_DecodeUTF8((const char *)data, size, NULL);
    if (text == NULL) {
        if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
            PyErr_Clear();
            return FALLBACK;
        }
        return ERROR;
    }
    *out = text;
    return OK;
}

/* A string field the result does not carry: it must still be valid UTF-8 for upb to accept the body. */
static int check_str(const uint8_t *data, Py_ssize_t size) {
    PyObject *text = NULL;
    CHECK(make_str(data, size, &text));
    Py_DECREF(text);
    return OK;
}

/* A str for an attribute key, shared when the same bytes came before in this request. */
static int make_key(Ctx *ctx, const uint8_t *data, Py_ssize_t size, PyObject **out) {
    if (size == 0 || size > KEY_CACHE_MAX_BYTES) {
        return make_str(data, size, out); /* "" is a singleton anyway; no memcmp on a NULL pointer */
    }
    /* A multiplicative hash, 8 bytes at a time (keys and short values are 10 to 40 bytes). */
    uint64_t hash = (uint64_t)size * 0x9E3779B97F4A7C15u, chunk;
    Py_ssize_t i = 0;
    for (; i + 8 <= size; i += 8) {
        memcpy(&chunk, data + i, 8);
        hash = (hash ^ chunk) * 0x9E3779B97F4A7C15u;
        hash ^= hash >> 29;
    }
    if (i < size) {
        chunk = 0;
        memcpy(&chunk, data + i, (size_t)(size - i));
        hash = (hash ^ chunk) * 0x9E3779B97F4A7C15u;
    }
    KeyEntry *entry = &ctx->keys[(hash >> 32 ^ hash >> 50) & (KEY_CACHE_SIZE - 1)];
    if (entry->text != NULL && entry->size == size && memcmp(entry->data, data, (size_t)size) == 0) {
        *out = Py_NewRef(entry->text);
        return OK;
    }
    CHECK(make_str(data, size, out));
    Py_XSETREF(entry->text, Py_NewRef(*out));
    entry->data = data;
    entry->size = size;
    return OK;
}

static const char HEX[] = "0123456789abcdef";

static int make_hex(const uint8_t *data, Py_ssize_t size, PyObject **out) {
    PyObject *text = PyUnicode_New(size * 2, 127);
    if (text == NULL) {
        return ERROR;
    }
    Py_UCS1 *chars = PyUnicode_1BYTE_DATA(text);
    for (Py_ssize_t i = 0; i < size; i++) {
        chars[2 * i] = (Py_UCS1)HEX[data[i] >> 4];
        chars[2 * i + 1] = (Py_UCS1)HEX[data[i] & 15];
    }
    *out = text;
    return OK;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int make_base64(const uint8_t *data, Py_ssize_t size, PyObject **out) {
    PyObject *text = PyUnicode_New((size + 2) / 3 * 4, 127);
    if (text == NULL) {
        return ERROR;
    }
    Py_UCS1 *o = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t i = 0;
    for (; i + 3 <= size; i += 3) {
        uint32_t n = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2];
        *o++ = (Py_UCS1)B64[n >> 18];
        *o++ = (Py_UCS1)B64[(n >> 12) & 63];
        *o++ = (Py_UCS1)B64[(n >> 6) & 63];
        *o++ = (Py_UCS1)B64[n & 63];
    }
    if (size - i == 1) {
        uint32_t n = (uint32_t)data[i] << 16;
        *o++ = (Py_UCS1)B64[n >> 18];
        *o++ = (Py_UCS1)B64[(n >> 12) & 63];
        *o++ = '=';
        *o++ = '=';
    } else if (size - i == 2) {
        uint32_t n = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8;
        *o++ = (Py_UCS1)B64[n >> 18];
        *o++ = (Py_UCS1)B64[(n >> 12) & 63];
        *o++ = (Py_UCS1)B64[(n >> 6) & 63];
        *o++ = '=';
    }
    *out = text;
    return OK;
}

static int parse_attributes_into(Ctx *ctx, const uint8_t *data, Py_ssize_t size, int depth, PyObject *dict);
static int parse_any_value(Ctx *ctx, const uint8_t *p, const uint8_t *end, int depth, PyObject **out);

/* ArrayValue: repeated AnyValue values = 1. */
static int parse_array(Ctx *ctx, const uint8_t *p, const uint8_t *end, int depth, PyObject *list) {
    Field f;
    if (depth > MAX_DEPTH) {
        return FALLBACK;
    }
    while (p < end) {
        NEXT(p, end, f);
        if (f.number == 1) {
            EXPECT(f, WT_LEN);
            PyObject *item = NULL;
            CHECK(parse_any_value(ctx, f.data, f.data + f.size, depth + 1, &item));
            int rc = PyList_Append(list, item);
            Py_DECREF(item);
            if (rc < 0) {
                return ERROR;
            }
        }
    }
    return OK;
}

/* AnyValue: a oneof of string 1, bool 2, int 3, double 4, array 5, kvlist 6, bytes 7, string_value_strindex 8. */
static int parse_any_value_fields(Ctx *ctx, const uint8_t *p, const uint8_t *end, int depth, PyObject **out) {
    Field f;
    while (p < end) {
        NEXT(p, end, f);
        if (f.number < 1 || f.number > 8) {
            continue; /* unknown field: skipped, like upb */
        }
        if (*out != NULL || f.number == 8) {
            return FALLBACK; /* the oneof set twice; or a string-table index, which the upb path reads as None */
        }
        switch (f.number) {
        case 1:
            EXPECT(f, WT_LEN);
            if (f.size > ctx->limit) {
                return FALLBACK;
            }
            CHECK(make_key(ctx, f.data, f.size, out)); /* short values repeat too ("ok", "function"...) */
            break;
        case 2:
            EXPECT(f, WT_VARINT);
            *out = PyBool_FromLong(f.value != 0);
            break;
        case 3:
            EXPECT(f, WT_VARINT);
            if ((*out = PyLong_FromLongLong((long long)(int64_t)f.value)) == NULL) {
                return ERROR;
            }
            break;
        case 4: {
            EXPECT(f, WT_I64);
            double number;
            memcpy(&number, &f.value, sizeof number);
            if ((*out = PyFloat_FromDouble(number)) == NULL) {
                return ERROR;
            }
            break;
        }
        case 5:
            EXPECT(f, WT_LEN);
            if ((*out = PyList_New(0)) == NULL) {
                return ERROR;
            }
            CHECK(parse_array(ctx, f.data, f.data + f.size, depth + 1, *out));
            break;
        case 6:
            EXPECT(f, WT_LEN);
            if ((*out = PyDict_New()) == NULL) {
                return ERROR;
            }
            CHECK(parse_attributes_into(ctx, f.data, f.size, depth + 1, *out));
            break;
        case 7:
            EXPECT(f, WT_LEN);
            if (f.size > ctx->limit) {
                return FALLBACK;
            }
            CHECK(make_base64(f.data, f.size, out));
            break;
        }
    }
    return OK;
}

static int parse_any_value(Ctx *ctx, const uint8_t *p, const uint8_t *end, int depth, PyObject **out) {
    if (depth > MAX_DEPTH) {
        return FALLBACK;
    }
    *out = NULL;
    int rc = parse_any_value_fields(ctx, p, end, depth, out);
    if (rc != OK) {
        Py_CLEAR(*out);
        return rc;
    }
    if (*out == NULL) {
        *out = Py_NewRef(Py_None); /* no value set */
    }
    return OK;
}

/* KeyValue: key = 1, value = 2, key_strindex = 3 (ignored, as the upb path ignores it). */
static int parse_key_value(Ctx *ctx, const uint8_t *p, const uint8_t *end, int depth, PyObject *dict) {
    Field f;
    Slice key = {0}, value = {0};
    if (depth > MAX_DEPTH) {
        return FALLBACK;
    }
    while (p < end) {
        NEXT(p, end, f);
        switch (f.number) {
        case 1:
            EXPECT(f, WT_LEN);
            ONCE(key, f);
            break;
        case 2:
            EXPECT(f, WT_LEN);
            ONCE(value, f);
            break;
        case 3:
            EXPECT(f, WT_VARINT);
            break;
        }
    }
    PyObject *key_obj = NULL, *value_obj = NULL;
    CHECK(make_key(ctx, key.data, key.size, &key_obj));
    if (value.present) {
        int rc = parse_any_value(ctx, value.data, value.data + value.size, depth + 1, &value_obj);
        if (rc != OK) {
            Py_DECREF(key_obj);
            return rc;
        }
    } else {
        value_obj = Py_NewRef(Py_None);
    }
    int rc = PyDict_SetItem(dict, key_obj, value_obj); /* a later duplicate key wins, like dict assignment */
    Py_DECREF(key_obj);
    Py_DECREF(value_obj);
    return rc < 0 ? ERROR : OK;
}

/* A KeyValue list (KeyValueList: values = 1). */
static int parse_attributes_into(Ctx *ctx, const uint8_t *data, Py_ssize_t size, int depth, PyObject *dict) {
    const uint8_t *p = data, *end = data + size;
    Field f;
    if (depth > MAX_DEPTH) {
        return FALLBACK;
    }
    while (p < end) {
        NEXT(p, end, f);
        if (f.number == 1) {
            EXPECT(f, WT_LEN);
            CHECK(parse_key_value(ctx, f.data, f.data + f.size, depth + 1, dict));
        }
    }
    return OK;
}

/* A KeyValue the result does not carry (scope and link attributes): decoded into a dict thrown away. */
static int check_key_value(Ctx *ctx, const Field *f, int depth) {
    PyObject *scratch = PyDict_New();
    if (scratch == NULL) {
        return ERROR;
    }
    int rc = parse_key_value(ctx, f->data, f->data + f->size, depth, scratch);
    Py_DECREF(scratch);
    return rc;
}

/* EntityRef (Resource field 3): schema_url 1, type 2, id_keys 3, description_keys 4 (all strings). */
static int check_entity_ref(const uint8_t *p, const uint8_t *end) {
    Field f;
    Slice schema_url = {0}, type = {0};
    while (p < end) {
        NEXT(p, end, f);
        switch (f.number) {
        case 1:
            EXPECT(f, WT_LEN);
            ONCE(schema_url, f);
            CHECK(check_str(f.data, f.size));
            break;
        case 2:
            EXPECT(f, WT_LEN);
            ONCE(type, f);
            CHECK(check_str(f.data, f.size));
            break;
        case 3:
        case 4:
            EXPECT(f, WT_LEN);
            CHECK(check_str(f.data, f.size));
            break;
        }
    }
    return OK;
}

/* Span.Link: trace_id 1, span_id 2, trace_state 3, attributes 4, dropped_attributes_count 5, flags 6. */
static int check_link(Ctx *ctx, const uint8_t *p, const uint8_t *end, int depth) {
    Field f;
    Slice trace_id = {0}, span_id = {0}, trace_state = {0}, dropped = {0}, flags = {0};
    while (p < end) {
        NEXT(p, end, f);
        switch (f.number) {
        case 1:
            EXPECT(f, WT_LEN);
            ONCE(trace_id, f);
            break;
        case 2:
            EXPECT(f, WT_LEN);
            ONCE(span_id, f);
            break;
        case 3:
            EXPECT(f, WT_LEN);
            ONCE(trace_state, f);
            CHECK(check_str(f.data, f.size));
            break;
        case 4:
            EXPECT(f, WT_LEN);
            CHECK(check_key_value(ctx, &f, depth + 1));
            break;
        case 5:
            EXPECT(f, WT_VARINT);
            ONCE(dropped, f);
            break;
        case 6:
            EXPECT(f, WT_I32);
            ONCE(flags, f);
            break;
        }
    }
    return OK;
}

/* Span.Event: time_unix_nano 1, name 2, attributes 3, dropped_attributes_count 4 -> (name, time, attributes). */
static int parse_event(Ctx *ctx, const uint8_t *p, const uint8_t *end, int depth, PyObject *events) {
    Field f;
    Slice when = {0}, name = {0}, dropped = {0};
    uint64_t time_value = 0;
    PyObject *attributes = PyDict_New();
    if (attributes == NULL) {
        return ERROR;
    }
    int rc = OK;
    while (p < end && rc == OK) {
        if (next_field(&p, end, &f) != OK) {
            rc = FALLBACK;
            break;
        }
#define EV_EXPECT(wt)                                                                                         \
    if (f.wire_type != (wt)) {                                                                                \
        rc = FALLBACK;                                                                                        \
        break;                                                                                                \
    }
#define EV_ONCE(slice)                                                                                        \
    if ((slice).present) {                                                                                    \
        rc = FALLBACK;                                                                                        \
        break;                                                                                                \
    }                                                                                                         \
    (slice).present = 1;                                                                                      \
    (slice).data = f.data;                                                                                    \
    (slice).size = f.size;
        switch (f.number) {
        case 1:
            EV_EXPECT(WT_I64);
            EV_ONCE(when);
            time_value = f.value;
            if (time_value > (uint64_t)INT64_MAX) {
                rc = FALLBACK; /* past 2262: the upb path rejects the span */
            }
            break;
        case 2:
            EV_EXPECT(WT_LEN);
            EV_ONCE(name);
            break;
        case 3:
            EV_EXPECT(WT_LEN);
            rc = parse_key_value(ctx, f.data, f.data + f.size, depth + 1, attributes);
            break;
        case 4:
            EV_EXPECT(WT_VARINT);
            EV_ONCE(dropped);
            break;
        }
#undef EV_EXPECT
#undef EV_ONCE
    }
    PyObject *name_obj = NULL, *time_obj = NULL, *event = NULL;
    if (rc == OK) {
        rc = make_key(ctx, name.data, name.size, &name_obj);
    }
    if (rc == OK && (time_obj = PyLong_FromUnsignedLongLong(time_value)) == NULL) {
        rc = ERROR;
    }
    if (rc == OK) {
        event = PyTuple_Pack(3, name_obj, time_obj, attributes);
        if (event == NULL || PyList_Append(events, event) < 0) {
            rc = ERROR;
        }
    }
    Py_XDECREF(event);
    Py_XDECREF(name_obj);
    Py_XDECREF(time_obj);
    Py_DECREF(attributes);
    return rc;
}

static int all_zero(const uint8_t *data, Py_ssize_t size) {
    for (Py_ssize_t i = 0; i < size; i++) {
        if (data[i]) {
            return 0;
        }
    }
    return 1;
}

enum {
    S_TRACE_ID,
    S_SPAN_ID,
    S_PARENT_ID,
    S_NAME,
    S_START,
    S_END,
    S_KIND,
    S_STATUS_CODE,
    S_STATUS_MESSAGE,
    S_SERVICE,
    S_SCOPE,
    S_ATTRIBUTES,
    S_RESOURCE,
    S_EVENTS,
    S_FIELDS
};

/* Status: message 2, code 3. */
static int parse_status(const uint8_t *p, const uint8_t *end, Slice *message, int32_t *code) {
    Field f;
    Slice code_seen = {0};
    while (p < end) {
        NEXT(p, end, f);
        switch (f.number) {
        case 2:
            EXPECT(f, WT_LEN);
            ONCE(*message, f);
            break;
        case 3:
            EXPECT(f, WT_VARINT);
            ONCE(code_seen, f);
            *code = (int32_t)(uint32_t)f.value; /* an enum is an int32: upb keeps the low 32 bits */
            break;
        }
    }
    return OK;
}

/* The fields of a Span; attributes and events go straight into `row`, the rest is decoded after. */
static int parse_span_fields(Ctx *ctx, const uint8_t *p, const uint8_t *end, int depth, PyObject **row,
                             Slice *ids, Slice *name, Slice *status_message, uint64_t *times, int32_t *kind,
                             int32_t *status_code) {
    Field f;
    Slice trace_state = {0}, start = {0}, stop = {0}, kind_seen = {0}, status = {0}, flags = {0};
    Slice dropped[3] = {{0}};
    while (p < end) {
        NEXT(p, end, f);
        switch (f.number) {
        case 1:
        case 2:
        case 4:
            EXPECT(f, WT_LEN);
            ONCE(ids[f.number == 4 ? 2 : f.number - 1], f);
            break;
        case 3:
            EXPECT(f, WT_LEN);
            ONCE(trace_state, f);
            CHECK(check_str(f.data, f.size));
            break;
        case 5:
            EXPECT(f, WT_LEN);
            ONCE(*name, f);
            break;
        case 6:
            EXPECT(f, WT_VARINT);
            ONCE(kind_seen, f);
            *kind = (int32_t)(uint32_t)f.value;
            break;
        case 7:
            EXPECT(f, WT_I64);
            ONCE(start, f);
            times[0] = f.value;
            break;
        case 8:
            EXPECT(f, WT_I64);
            ONCE(stop, f);
            times[1] = f.value;
            break;
        case 9:
            EXPECT(f, WT_LEN);
            CHECK(parse_key_value(ctx, f.data, f.data + f.size, depth + 1, row[S_ATTRIBUTES]));
            break;
        case 10:
        case 12:
        case 14:
            EXPECT(f, WT_VARINT);
            ONCE(dropped[(f.number - 10) / 2], f);
            break;
        case 11:
            EXPECT(f, WT_LEN);
            CHECK(parse_event(ctx, f.data, f.data + f.size, depth + 1, row[S_EVENTS]));
            break;
        case 13:
            EXPECT(f, WT_LEN);
            CHECK(check_link(ctx, f.data, f.data + f.size, depth + 1));
            break;
        case 15:
            EXPECT(f, WT_LEN);
            ONCE(status, f);
            CHECK(parse_status(f.data, f.data + f.size, status_message, status_code));
            break;
        case 16:
            EXPECT(f, WT_I32);
            ONCE(flags, f);
            break;
        }
    }
    /* The ids the upb path accepts: 16 and 8 non-zero bytes, a parent of 0 or 8 bytes. */
    if (ids[0].size != 16 || all_zero(ids[0].data, 16) || ids[1].size != 8 || all_zero(ids[1].data, 8) ||
        (ids[2].size != 0 && ids[2].size != 8)) {
        return FALLBACK;
    }
    if (name->size > ctx->limit) {
        return FALLBACK;
    }
    /* A time past 2262 (>= 2^63 ns) is legal OTLP but no store column holds it: the upb path rejects the span. */
    if (times[0] > (uint64_t)INT64_MAX || times[1] > (uint64_t)INT64_MAX) {
        return FALLBACK;
    }
    return OK;
}

static int span_row(Ctx *ctx, const uint8_t *p, const uint8_t *end, int depth, PyObject **row) {
    Slice ids[3] = {{0}}, name = {0}, status_message = {0};
    uint64_t times[2] = {0, 0};
    int32_t kind = 0, status_code = 0;
    if ((row[S_ATTRIBUTES] = PyDict_New()) == NULL || (row[S_EVENTS] = PyList_New(0)) == NULL) {
        return ERROR;
    }
    CHECK(parse_span_fields(ctx, p, end, depth, row, ids, &name, &status_message, times, &kind, &status_code));
    CHECK(make_hex(ids[0].data, 16, &row[S_TRACE_ID]));
    CHECK(make_hex(ids[1].data, 8, &row[S_SPAN_ID]));
    if (ids[2].size) {
        CHECK(make_hex(ids[2].data, 8, &row[S_PARENT_ID]));
    } else {
        row[S_PARENT_ID] = Py_NewRef(Py_None);
    }
    CHECK(make_key(ctx, name.data, name.size, &row[S_NAME]));
    if (status_message.size) {
        CHECK(make_str(status_message.data, status_message.size, &row[S_STATUS_MESSAGE]));
    } else {
        row[S_STATUS_MESSAGE] = Py_NewRef(Py_None);
    }
    if ((row[S_START] = PyLong_FromUnsignedLongLong(times[0])) == NULL ||
        (row[S_END] = PyLong_FromUnsignedLongLong(times[1])) == NULL || (row[S_KIND] = PyLong_FromLong(kind)) == NULL ||
        (row[S_STATUS_CODE] = PyLong_FromLong(status_code)) == NULL) {
        return ERROR;
    }
    return OK;
}

/* Span -> the row tuple, appended to `out`. */
static int parse_span(Ctx *ctx, const uint8_t *p, const uint8_t *end, int depth, PyObject *service,
                      PyObject *scope, PyObject *resource, PyObject *out) {
    PyObject *row[S_FIELDS] = {NULL};
    row[S_SERVICE] = Py_NewRef(service);
    row[S_SCOPE] = Py_NewRef(scope);
    row[S_RESOURCE] = Py_NewRef(resource);
    int rc = span_row(ctx, p, end, depth, row);
    if (rc == OK) {
        PyObject *tuple = PyTuple_New(S_FIELDS);
        if (tuple == NULL) {
            rc = ERROR;
        } else {
            for (int i = 0; i < S_FIELDS; i++) {
                PyTuple_SET_ITEM(tuple, i, row[i]); /* steals */
                row[i] = NULL;
            }
            if (PyList_Append(out, tuple) < 0) {
                rc = ERROR;
            }
            Py_DECREF(tuple);
        }
    }
    for (int i = 0; i < S_FIELDS; i++) {
        Py_XDECREF(row[i]);
    }
    return rc;
}

/* InstrumentationScope: name 1, version 2, attributes 3, dropped_attributes_count 4. */
static int parse_scope(Ctx *ctx, const uint8_t *p, const uint8_t *end, int depth, Slice *name) {
    Field f;
    Slice version = {0}, dropped = {0};
    while (p < end) {
        NEXT(p, end, f);
        switch (f.number) {
        case 1:
            EXPECT(f, WT_LEN);
            ONCE(*name, f);
            break;
        case 2:
            EXPECT(f, WT_LEN);
            ONCE(version, f);
            CHECK(check_str(f.data, f.size));
            break;
        case 3:
            EXPECT(f, WT_LEN);
            CHECK(check_key_value(ctx, &f, depth + 1));
            break;
        case 4:
            EXPECT(f, WT_VARINT);
            ONCE(dropped, f);
            break;
        }
    }
    return OK;
}

/* ScopeSpans: scope 1, spans 2, schema_url 3. The scope may come after the spans: two passes. */
static int parse_scope_spans(Ctx *ctx, const uint8_t *data, Py_ssize_t size, int depth, PyObject *service,
                             PyObject *resource, PyObject *out) {
    const uint8_t *p = data, *end = data + size;
    Field f;
    Slice scope = {0}, name = {0}, schema_url = {0};
    while (p < end) {
        NEXT(p, end, f);
        switch (f.number) {
        case 1:
            EXPECT(f, WT_LEN);
            ONCE(scope, f);
            CHECK(parse_scope(ctx, f.data, f.data + f.size, depth + 1, &name));
            break;
        case 2:
            EXPECT(f, WT_LEN);
            break;
        case 3:
            EXPECT(f, WT_LEN);
            ONCE(schema_url, f);
            CHECK(check_str(f.data, f.size));
            break;
        }
    }
    PyObject *scope_name = NULL;
    if (name.size) {
        CHECK(make_str(name.data, name.size, &scope_name));
    } else {
        scope_name = Py_NewRef(Py_None);
    }
    int rc = OK;
    for (p = data; p < end && rc == OK;) {
        next_field(&p, end, &f); /* cannot fail: the first pass read the same bytes */
        if (f.number == 2) {
            rc = parse_span(ctx, f.data, f.data + f.size, depth + 1, service, scope_name, resource, out);
        }
    }
    Py_DECREF(scope_name);
    return rc;
}

/* Resource: attributes 1, dropped_attributes_count 2, entity_refs 3. */
static int parse_resource(Ctx *ctx, const uint8_t *p, const uint8_t *end, int depth, PyObject *attributes) {
    Field f;
    Slice dropped = {0};
    while (p < end) {
        NEXT(p, end, f);
        switch (f.number) {
        case 1:
            EXPECT(f, WT_LEN);
            CHECK(parse_key_value(ctx, f.data, f.data + f.size, depth + 1, attributes));
            break;
        case 2:
            EXPECT(f, WT_VARINT);
            ONCE(dropped, f);
            break;
        case 3:
            EXPECT(f, WT_LEN);
            CHECK(check_entity_ref(f.data, f.data + f.size));
            break;
        }
    }
    return OK;
}

/* ResourceSpans: resource 1, scope_spans 2, schema_url 3. The resource may come last: two passes. */
static int parse_resource_spans_fields(Ctx *ctx, const uint8_t *data, Py_ssize_t size, int depth,
                                       PyObject *resource) {
    const uint8_t *p = data, *end = data + size;
    Field f;
    Slice seen = {0}, schema_url = {0};
    while (p < end) {
        NEXT(p, end, f);
        switch (f.number) {
        case 1:
            EXPECT(f, WT_LEN);
            ONCE(seen, f);
            CHECK(parse_resource(ctx, f.data, f.data + f.size, depth + 1, resource));
            break;
        case 2:
            EXPECT(f, WT_LEN);
            break;
        case 3:
            EXPECT(f, WT_LEN);
            ONCE(schema_url, f);
            CHECK(check_str(f.data, f.size));
            break;
        }
    }
    return OK;
}

static int parse_resource_spans(Ctx *ctx, const uint8_t *data, Py_ssize_t size, int depth, PyObject *out) {
    PyObject *resource = PyDict_New();
    if (resource == NULL) {
        return ERROR;
    }
    int rc = parse_resource_spans_fields(ctx, data, size, depth, resource);
    if (rc == OK) {
        PyObject *service = PyDict_GetItemString(resource, "service.name"); /* borrowed */
        if (service == NULL || !PyUnicode_CheckExact(service)) {
            service = Py_None;
        }
        Py_INCREF(service); /* the dict must not be the only owner while spans are decoded */
        const uint8_t *p = data, *end = data + size;
        Field f;
        while (p < end && rc == OK) {
            next_field(&p, end, &f); /* cannot fail: the first pass read the same bytes */
            if (f.number == 2) {
                rc = parse_scope_spans(ctx, f.data, f.size, depth + 1, service, resource, out);
            }
        }
        Py_DECREF(service);
    }
    Py_DECREF(resource);
    return rc;
}

static int parse_request(Ctx *ctx, const uint8_t *data, Py_ssize_t size, PyObject *out) {
    const uint8_t *p = data, *end = data + size;
    Field f;
    while (p < end) {
        NEXT(p, end, f);
        if (f.number == 1) {
            EXPECT(f, WT_LEN);
            CHECK(parse_resource_spans(ctx, f.data, f.size, 1, out));
        }
    }
    return OK;
}

static PyObject *decode(PyObject *module, PyObject *args) {
    Py_buffer body;
    Py_ssize_t limit;
    (void)module;
    if (!PyArg_ParseTuple(args, "y*n:decode", &body, &limit)) {
        return NULL;
    }
    Ctx *ctx = PyMem_Calloc(1, sizeof(Ctx));
    if (ctx == NULL) {
        PyBuffer_Release(&body);
        return PyErr_NoMemory();
    }
    ctx->limit = limit;
    /* Thousands of dicts and lists, none of them in a cycle: no collection halfway (no Python code runs). */
    int gc_was_enabled = PyGC_Disable();
    PyObject *out = PyList_New(0);
    int rc = out == NULL ? ERROR : parse_request(ctx, (const uint8_t *)body.buf, body.len, out);
    if (gc_was_enabled) {
        PyGC_Enable();
    }
    for (int i = 0; i < KEY_CACHE_SIZE; i++) {
        Py_XDECREF(ctx->keys[i].text);
    }
    PyMem_Free(ctx);
    PyBuffer_Release(&body);
    if (rc == OK) {
        return out;
    }
    Py_XDECREF(out);
    if (rc == ERROR) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS,
     "decode(body, max_attribute_bytes) -> list of span tuples, or None when the body needs the exact upb path."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_otlpfast", "A compiled fast path for decoding OTLP trace requests.", -1, methods, NULL, NULL,
    NULL, NULL,
};

PyMODINIT_FUNC PyInit__otlpfast(void) { return PyModule_Create(&module_def); }
