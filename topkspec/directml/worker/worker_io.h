/*
 * What topkspec's workers share (topk_worker.exe on DirectML.dll, topk_ort_worker.exe on ONNX
 * Runtime): the framed protocol on the standard streams (see protocol.py, the other end), the
 * byte buffers replies are built in, a reader of request payloads, the clock, the handler that
 * turns an unhandled exception into an exit status, and the request loop.
 */
#ifndef TOPK_WORKER_IO_H
#define TOPK_WORKER_IO_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Commands and stages every worker knows (protocol.py). */
#define WORKER_PROTOCOL 1
#define CMD_CRASH 4
#define CMD_HANG 5
#define CMD_QUIT 6
#define STAGE_NONE 0
#define STAGE_DEVICE 6
#define STAGE_PROTOCOL 7
#define MAX_FRAME (1u << 30)

static const char *worker_name = "topk_worker"; /* for messages on stderr */

/* ---- standard streams ------------------------------------------------------------------- */

static HANDLE in_handle, out_handle;

static int read_exact(void *buffer, DWORD size) {
    char *at = buffer;
    while (size) {
        DWORD got = 0;
        if (!ReadFile(in_handle, at, size, &got, NULL) || got == 0) return 0;
        at += got;
        size -= got;
    }
    return 1;
}

static int write_exact(const void *buffer, DWORD size) {
    const char *at = buffer;
    while (size) {
        DWORD put = 0;
        if (!WriteFile(out_handle, at, size, &put, NULL) || put == 0) return 0;
        at += put;
        size -= put;
    }
    return 1;
}

/* A growing byte buffer for replies. */
typedef struct {
    uint8_t *data;
    size_t size, capacity;
} bytes;

static void put(bytes *b, const void *data, size_t size) {
    if (b->size + size > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 256;
        while (capacity < b->size + size) capacity *= 2;
        b->data = realloc(b->data, capacity);
        if (!b->data) {
            fprintf(stderr, "%s: out of memory\n", worker_name);
            ExitProcess(3);
        }
        b->capacity = capacity;
    }
    memcpy(b->data + b->size, data, size);
    b->size += size;
}

static void put_u64(bytes *b, uint64_t v) { put(b, &v, 8); }
static void put_f64(bytes *b, double v) { put(b, &v, 8); }

static void put_text(bytes *b, const char *text) { put(b, text, strlen(text)); }

static void put_json_string(bytes *b, const char *text) {
    put_text(b, "\"");
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        char escaped[8];
        if (*c == '"' || *c == '\\') {
            escaped[0] = '\\';
            escaped[1] = (char)*c;
            put(b, escaped, 2);
        } else if (*c < 0x20) {
            snprintf(escaped, sizeof escaped, "\\u%04x", *c);
            put_text(b, escaped);
        } else {
            put(b, c, 1);
        }
    }
    put_text(b, "\"");
}

/* A reply frame: u32 length, u32 status (an HRESULT), u32 stage, payload. */
static bytes *captured; /* while set, reply() appends its frame here (--replay) */

static int reply(uint32_t status, uint32_t stage, const bytes *payload) {
    uint32_t head[3];
    head[0] = 8 + (uint32_t)(payload ? payload->size : 0);
    head[1] = status;
    head[2] = stage;
    if (captured) {
        put(captured, head, sizeof head);
        if (payload && payload->size) put(captured, payload->data, payload->size);
        return 1;
    }
    if (!write_exact(head, sizeof head)) return 0;
    if (payload && payload->size && !write_exact(payload->data, (DWORD)payload->size)) return 0;
    return 1;
}

static int reply_message(uint32_t status, uint32_t stage, const char *message) {
    bytes b = {0};
    put_text(&b, message);
    int ok = reply(status, stage, &b);
    free(b.data);
    return ok;
}

/* ---- clocks ----------------------------------------------------------------------------- */

static double ticks_per_us;

static double now_us(void) {
    LARGE_INTEGER t;
    QueryPerformanceCounter(&t);
    return (double)t.QuadPart / ticks_per_us;
}


typedef struct {
    const uint8_t *at, *end;
    int ok;
} reader;

/* Copies the next n bytes to out; past the end, marks the reader failed and leaves out alone. */
static void take(reader *r, void *out, size_t n) {
    if ((size_t)(r->end - r->at) < n) {
        r->ok = 0;
        return;
    }
    memcpy(out, r->at, n);
    r->at += n;
}

static uint32_t get_u32(reader *r) {
    uint32_t v = 0;
    take(r, &v, sizeof v);
    return v;
}

static uint64_t get_u64(reader *r) {
    uint64_t v = 0;
    take(r, &v, sizeof v);
    return v;
}


static LONG WINAPI on_crash(EXCEPTION_POINTERS *info) {
    char text[128];
    DWORD code = info && info->ExceptionRecord ? info->ExceptionRecord->ExceptionCode : 0;
    snprintf(text, sizeof text, "%s: unhandled exception 0x%08lx\n", worker_name, (unsigned long)code);
    DWORD put_count;
    WriteFile(GetStdHandle(STD_ERROR_HANDLE), text, (DWORD)strlen(text), &put_count, NULL);
    TerminateProcess(GetCurrentProcess(), 70);
    return EXCEPTION_EXECUTE_HANDLER;
}


/* ---- start and the request loop ----------------------------------------------------------- */

/* Streams, clock and crash handler: the first thing main does. */
static void io_start(const char *name) {
    worker_name = name;
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
    SetUnhandledExceptionFilter(on_crash);
    in_handle = GetStdHandle(STD_INPUT_HANDLE);
    out_handle = GetStdHandle(STD_OUTPUT_HANDLE);
    LARGE_INTEGER frequency;
    QueryPerformanceFrequency(&frequency);
    ticks_per_us = (double)frequency.QuadPart / 1e6;
}

/* Answers requests until QUIT or the pipe closes: the shared commands here, the worker's own
   through `handle` (which returns 0 when a reply could not be written, -1 for an unknown
   command). Returns the process's exit status. */
static int serve(int (*handle)(uint32_t command, reader *r)) {
    bytes request = {0};
    for (;;) {
        uint32_t size;
        if (!read_exact(&size, 4)) return 0; /* the suite closed the pipe */
        if (size < 4 || size > MAX_FRAME) {
            reply_message(E_INVALIDARG, STAGE_PROTOCOL, "bad frame length");
            return 2;
        }
        if (request.capacity < size) {
            free(request.data);
            request.data = malloc(size);
            request.capacity = size;
            if (!request.data) return 3;
        }
        if (!read_exact(request.data, size)) return 0;
        reader r = {request.data + 4, request.data + size, 1};
        uint32_t command;
        memcpy(&command, request.data, 4);
        int ok;
        switch (command) {
        case CMD_CRASH: *(volatile int *)(uintptr_t)8 = 1; ok = 1; break;
        case CMD_HANG: Sleep(INFINITE); ok = 1; break;
        case CMD_QUIT: reply(S_OK, STAGE_NONE, NULL); return 0;
        default:
            ok = handle(command, &r);
            if (ok < 0) ok = reply_message(E_INVALIDARG, STAGE_PROTOCOL, "unknown command");
        }
        if (!ok) return 2;
    }
}

#endif
