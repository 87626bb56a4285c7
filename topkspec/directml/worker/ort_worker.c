/*
 * topk_ort_worker: runs ONNX TopK models in the Windows build of ONNX Runtime for topkspec,
 * on its DirectML execution provider (CPU fallback off) or on its CPU provider.
 *
 * It speaks the same framed protocol as topk_worker (worker_io.h; protocol.py and ort_protocol.py
 * are the other end). At start it loads onnxruntime.dll from the path it is given (DirectML.dll
 * beside it), makes the environment and the session options of the chosen provider (appending the
 * DirectML EP creates its D3D12 and DirectML devices) and writes one "ready" frame: ONNX Runtime's
 * version, the providers it lists, the provider in use and the DirectML.dll it loaded. Then:
 *
 *   LOAD   a model (bytes): CreateSessionFromArray. Reply: u32 session id, or ONNX Runtime's
 *          error code and message.
 *   RUN    u32 session id, u32 input count, u32 output count; per input a name, an element type,
 *          the dimensions and the bytes; per output a name. Reply: per output the element type,
 *          the dimensions and the bytes, then f64 microseconds Run took; or the error.
 *   CRASH / HANG / QUIT   as topk_worker.
 *
 * The ONNX Runtime C API is reached through OrtGetApiBase()->GetApi(version), a table of function
 * pointers whose order ONNX Runtime keeps stable across releases; the slots used here are named
 * below from onnxruntime_c_api.h. Built with mingw-w64 or `zig cc -target x86_64-windows-gnu`:
 *   cc -O1 ort_worker.c -o topk_ort_worker.exe
 */
#include "worker_io.h"

#define CMD_LOAD 8
#define CMD_RUN 9
#define STAGE_LOAD 8
#define STAGE_RUN 9
#define MAX_DIMS 16
#define MAX_IO 4

/* ---- ONNX Runtime's C API: the slots of OrtApi this program calls ------------------------ */

typedef struct OrtStatus OrtStatus;
typedef void *ort_ptr; /* OrtEnv, OrtSession, OrtSessionOptions, OrtValue, ... */

typedef struct {
    const void *(WINAPI *GetApi)(uint32_t version);
    const char *(WINAPI *GetVersionString)(void);
} OrtApiBase;

enum {
    SLOT_GET_ERROR_CODE = 1,
    SLOT_GET_ERROR_MESSAGE = 2,
    SLOT_CREATE_ENV = 3,
    SLOT_CREATE_SESSION_FROM_ARRAY = 8,
    SLOT_RUN = 9,
    SLOT_CREATE_SESSION_OPTIONS = 10,
    SLOT_SET_SESSION_EXECUTION_MODE = 13,
    SLOT_DISABLE_MEM_PATTERN = 17,
    SLOT_DISABLE_CPU_MEM_ARENA = 19,
    SLOT_SET_SESSION_LOG_SEVERITY_LEVEL = 22,
    SLOT_SET_INTRA_OP_NUM_THREADS = 24,
    SLOT_CREATE_TENSOR_WITH_DATA = 49,
    SLOT_GET_TENSOR_MUTABLE_DATA = 51,
    SLOT_GET_TENSOR_ELEMENT_TYPE = 60,
    SLOT_GET_DIMENSIONS_COUNT = 61,
    SLOT_GET_DIMENSIONS = 62,
    SLOT_GET_TENSOR_TYPE_AND_SHAPE = 65,
    SLOT_CREATE_CPU_MEMORY_INFO = 69,
    SLOT_RELEASE_STATUS = 93,
    SLOT_RELEASE_VALUE = 96,
    SLOT_RELEASE_TENSOR_TYPE_AND_SHAPE_INFO = 99,
    SLOT_GET_AVAILABLE_PROVIDERS = 125,
    SLOT_RELEASE_AVAILABLE_PROVIDERS = 126,
    SLOT_ADD_SESSION_CONFIG_ENTRY = 130,
};
/* API versions tried, newest first: 5 (ONNX Runtime 1.5) is the first with every slot above. */
static const uint32_t api_versions[] = {14, 10, 5};

static void *const *api;
#define CALL(slot, type) ((type)api[slot])

typedef OrtStatus *(WINAPI *fn_status_0)(ort_ptr);
typedef int(WINAPI *fn_error_code)(const OrtStatus *);
typedef const char *(WINAPI *fn_error_message)(const OrtStatus *);
typedef void(WINAPI *fn_release)(void *);
typedef OrtStatus *(WINAPI *fn_create_env)(int, const char *, ort_ptr *);
typedef OrtStatus *(WINAPI *fn_create_session_from_array)(ort_ptr, const void *, size_t, ort_ptr, ort_ptr *);
typedef OrtStatus *(WINAPI *fn_run)(ort_ptr, ort_ptr, const char *const *, const ort_ptr *, size_t,
                                    const char *const *, size_t, ort_ptr *);
typedef OrtStatus *(WINAPI *fn_create_options)(ort_ptr *);
typedef OrtStatus *(WINAPI *fn_set_int)(ort_ptr, int);
typedef OrtStatus *(WINAPI *fn_create_tensor)(ort_ptr, void *, size_t, const int64_t *, size_t, int, ort_ptr *);
typedef OrtStatus *(WINAPI *fn_out_ptr)(ort_ptr, void **);
typedef OrtStatus *(WINAPI *fn_element_type)(ort_ptr, int *);
typedef OrtStatus *(WINAPI *fn_dims_count)(ort_ptr, size_t *);
typedef OrtStatus *(WINAPI *fn_dims)(ort_ptr, int64_t *, size_t);
typedef OrtStatus *(WINAPI *fn_cpu_memory_info)(int, int, ort_ptr *);
typedef OrtStatus *(WINAPI *fn_providers)(char ***, int *);
typedef OrtStatus *(WINAPI *fn_release_providers)(char **, int);
typedef OrtStatus *(WINAPI *fn_config_entry)(ort_ptr, const char *, const char *);
typedef OrtStatus *(WINAPI *fn_append_dml)(ort_ptr, int);

#define ORT_LOGGING_LEVEL_FATAL 4
#define ORT_ARENA_ALLOCATOR 1
#define ORT_MEM_TYPE_DEFAULT 0
#define ORT_SEQUENTIAL 0
/* ONNX element types (TensorProto.DataType) and their sizes in bytes; 0: not a fixed-size type. */
static const int element_sizes[17] = {0, 4, 1, 1, 2, 2, 4, 8, 0, 1, 2, 8, 4, 8, 8, 16, 2};

static ort_ptr env, options, memory_info;
static char last_error[2048];

/* Takes an OrtStatus: 0 when it is NULL (success); else its code (1..), message kept in last_error. */
static int failed_with(OrtStatus *status) {
    if (!status) return 0;
    int code = CALL(SLOT_GET_ERROR_CODE, fn_error_code)(status);
    snprintf(last_error, sizeof last_error, "%s", CALL(SLOT_GET_ERROR_MESSAGE, fn_error_message)(status));
    CALL(SLOT_RELEASE_STATUS, fn_release)(status);
    return code ? code : 1;
}

/* An error reply: E_FAIL at `stage`; the payload is u32 ONNX Runtime's OrtErrorCode, then its message. */
static int reply_error(uint32_t stage, int code) {
    bytes b = {0};
    uint32_t c = (uint32_t)code;
    put(&b, &c, 4);
    put_text(&b, last_error);
    int ok = reply(E_FAIL, stage, &b);
    free(b.data);
    return ok;
}

/* ---- sessions ------------------------------------------------------------------------------ */

static ort_ptr *sessions;
static uint32_t session_count, session_capacity;

static int do_load(reader *r) {
    size_t size = (size_t)(r->end - r->at);
    ort_ptr session = NULL;
    int code = failed_with(CALL(SLOT_CREATE_SESSION_FROM_ARRAY, fn_create_session_from_array)(
        env, r->at, size, options, &session));
    if (code) return reply_error(STAGE_LOAD, code);
    if (session_count == session_capacity) {
        session_capacity = session_capacity ? 2 * session_capacity : 64;
        sessions = realloc(sessions, session_capacity * sizeof *sessions);
        if (!sessions) ExitProcess(3);
    }
    sessions[session_count] = session;
    bytes b = {0};
    put(&b, &session_count, 4);
    session_count++;
    int ok = reply(S_OK, STAGE_NONE, &b);
    free(b.data);
    return ok;
}

static void get_name(reader *r, char *out, size_t limit) {
    uint32_t length = get_u32(r);
    if (!r->ok || length >= limit) {
        r->ok = 0;
        out[0] = 0;
        return;
    }
    take(r, out, length);
    out[length] = 0;
}

static int do_run(reader *r) {
    char in_names[MAX_IO][64], out_names[MAX_IO][64];
    const char *in_list[MAX_IO], *out_list[MAX_IO];
    ort_ptr inputs[MAX_IO] = {0}, outputs[MAX_IO] = {0};
    uint32_t id = get_u32(r), n_in = get_u32(r), n_out = get_u32(r);
    if (!r->ok || id >= session_count || n_in > MAX_IO || n_out > MAX_IO || n_out == 0)
        return reply_message(E_INVALIDARG, STAGE_PROTOCOL, "bad RUN request");
    int code = 0;
    uint32_t made = 0;
    for (; made < n_in && r->ok; made++) {
        get_name(r, in_names[made], sizeof in_names[made]);
        in_list[made] = in_names[made];
        uint32_t type = get_u32(r), rank = get_u32(r);
        int64_t dims[MAX_DIMS];
        if (rank > MAX_DIMS || type >= 17 || !element_sizes[type]) {
            r->ok = 0;
            break;
        }
        take(r, dims, rank * sizeof(int64_t));
        uint64_t size = get_u64(r);
        if (!r->ok || (uint64_t)(r->end - r->at) < size) {
            r->ok = 0;
            break;
        }
        /* The request buffer outlives the call: the tensor points into it. */
        code = failed_with(CALL(SLOT_CREATE_TENSOR_WITH_DATA, fn_create_tensor)(
            memory_info, (void *)r->at, (size_t)size, dims, rank, (int)type, &inputs[made]));
        r->at += size;
        if (code) break;
    }
    for (uint32_t i = 0; i < n_out && r->ok && !code; i++) {
        get_name(r, out_names[i], sizeof out_names[i]);
        out_list[i] = out_names[i];
    }
    int ok;
    if (!r->ok) {
        ok = reply_message(E_INVALIDARG, STAGE_PROTOCOL, "bad RUN request");
    } else if (code) {
        ok = reply_error(STAGE_RUN, code);
    } else {
        double start = now_us();
        code = failed_with(CALL(SLOT_RUN, fn_run)(sessions[id], NULL, in_list, inputs, n_in, out_list, n_out, outputs));
        double run_us = now_us() - start;
        if (code) {
            ok = reply_error(STAGE_RUN, code);
        } else {
            bytes b = {0};
            for (uint32_t i = 0; i < n_out && !code; i++) {
                ort_ptr info = NULL;
                int type = 0;
                size_t rank = 0;
                int64_t dims[MAX_DIMS];
                void *data = NULL;
                code = failed_with(CALL(SLOT_GET_TENSOR_TYPE_AND_SHAPE, fn_out_ptr)(outputs[i], &info));
                if (!code) code = failed_with(CALL(SLOT_GET_TENSOR_ELEMENT_TYPE, fn_element_type)(info, &type));
                if (!code) code = failed_with(CALL(SLOT_GET_DIMENSIONS_COUNT, fn_dims_count)(info, &rank));
                if (!code && (rank > MAX_DIMS || type < 0 || type >= 17 || !element_sizes[type])) {
                    snprintf(last_error, sizeof last_error, "output %s: element type %d, %u dimensions",
                             out_names[i], type, (unsigned)rank);
                    code = 1;
                }
                if (!code) code = failed_with(CALL(SLOT_GET_DIMENSIONS, fn_dims)(info, dims, rank));
                if (info) CALL(SLOT_RELEASE_TENSOR_TYPE_AND_SHAPE_INFO, fn_release)(info);
                if (code) break;
                uint64_t count = 1;
                for (size_t d = 0; d < rank; d++) count *= (uint64_t)dims[d];
                if (count) code = failed_with(CALL(SLOT_GET_TENSOR_MUTABLE_DATA, fn_out_ptr)(outputs[i], &data));
                if (code) break;
                uint32_t head[2] = {(uint32_t)type, (uint32_t)rank};
                put(&b, head, sizeof head);
                put(&b, dims, rank * sizeof(int64_t));
                put_u64(&b, count * element_sizes[type]);
                if (count) put(&b, data, (size_t)(count * element_sizes[type]));
            }
            put_f64(&b, run_us);
            ok = code ? reply_error(STAGE_RUN, code) : reply(S_OK, STAGE_NONE, &b);
            free(b.data);
        }
    }
    for (uint32_t i = 0; i < MAX_IO; i++) {
        if (inputs[i]) CALL(SLOT_RELEASE_VALUE, fn_release)(inputs[i]);
        if (outputs[i]) CALL(SLOT_RELEASE_VALUE, fn_release)(outputs[i]);
    }
    return ok;
}

static int handle_request(uint32_t command, reader *r) {
    switch (command) {
    case CMD_LOAD: return do_load(r);
    case CMD_RUN: return do_run(r);
    default: return -1;
    }
}

/* ---- start ----------------------------------------------------------------------------------- */

/* The file a loaded module came from, as UTF-8 ("" when it is not loaded). */
static void module_path(const wchar_t *name, char *out, size_t size) {
    wchar_t wide[MAX_PATH * 2];
    HMODULE module = GetModuleHandleW(name);
    out[0] = 0;
    if (module && GetModuleFileNameW(module, wide, MAX_PATH * 2))
        WideCharToMultiByte(CP_UTF8, 0, wide, -1, out, (int)size, NULL, NULL);
}

/* Session options: ONNX Runtime's DirectML documentation asks for memory patterns off and
   sequential execution; CPU fallback off makes every verdict the EP's own. */
static int make_options(HMODULE ort, int dml, const char **failed) {
    int code = failed_with(CALL(SLOT_CREATE_SESSION_OPTIONS, fn_create_options)(&options));
    if (!code) code = failed_with(CALL(SLOT_SET_SESSION_LOG_SEVERITY_LEVEL, fn_set_int)(options, ORT_LOGGING_LEVEL_FATAL));
    if (!code) code = failed_with(CALL(SLOT_DISABLE_CPU_MEM_ARENA, fn_status_0)(options));
    if (!code) code = failed_with(CALL(SLOT_SET_INTRA_OP_NUM_THREADS, fn_set_int)(options, 1));
    if (!code) code = failed_with(CALL(SLOT_ADD_SESSION_CONFIG_ENTRY, fn_config_entry)(
        options, "session.intra_op.allow_spinning", "0"));
    if (code) {
        *failed = "session options";
        return code;
    }
    if (!dml) return 0;
    code = failed_with(CALL(SLOT_DISABLE_MEM_PATTERN, fn_status_0)(options));
    if (!code) code = failed_with(CALL(SLOT_SET_SESSION_EXECUTION_MODE, fn_set_int)(options, ORT_SEQUENTIAL));
    if (!code) code = failed_with(CALL(SLOT_ADD_SESSION_CONFIG_ENTRY, fn_config_entry)(
        options, "session.disable_cpu_ep_fallback", "1"));
    if (code) {
        *failed = "session options";
        return code;
    }
    fn_append_dml append = (fn_append_dml)(void *)GetProcAddress(ort, "OrtSessionOptionsAppendExecutionProvider_DML");
    if (!append) {
        snprintf(last_error, sizeof last_error, "onnxruntime.dll exports no OrtSessionOptionsAppendExecutionProvider_DML "
                 "(not a build with the DirectML execution provider)");
        *failed = "OrtSessionOptionsAppendExecutionProvider_DML";
        return 1;
    }
    code = failed_with(append(options, 0));
    if (code) *failed = "OrtSessionOptionsAppendExecutionProvider_DML";
    return code;
}

int main(int argc, char **argv) {
    const char *dll = "onnxruntime.dll", *provider = "dml";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ort") && i + 1 < argc) dll = argv[++i];
        else if (!strcmp(argv[i], "--provider") && i + 1 < argc) provider = argv[++i];
    }
    io_start("topk_ort_worker");
    int dml = strcmp(provider, "cpu") != 0;
    const char *failed = "", *version = "";
    int code = 0;
    double start = now_us();

    /* DirectML.dll and ONNX Runtime's other DLLs are found beside onnxruntime.dll. */
    wchar_t wide[MAX_PATH * 2], folder[MAX_PATH * 2];
    MultiByteToWideChar(CP_UTF8, 0, dll, -1, wide, MAX_PATH * 2);
    wcscpy(folder, wide);
    wchar_t *slash = wcsrchr(folder, L'\\');
    if (slash) {
        *slash = 0;
        SetDllDirectoryW(folder);
    }
    HMODULE ort = LoadLibraryExW(wide, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
    const OrtApiBase *(WINAPI *get_base)(void) = NULL;
    if (!ort) {
        snprintf(last_error, sizeof last_error, "LoadLibrary(%s) failed: error %lu", dll, (unsigned long)GetLastError());
        failed = "LoadLibrary(onnxruntime.dll)";
        code = 1;
    } else {
        get_base = (const OrtApiBase *(WINAPI *)(void))(void *)GetProcAddress(ort, "OrtGetApiBase");
        if (!get_base) {
            snprintf(last_error, sizeof last_error, "%s exports no OrtGetApiBase", dll);
            failed = "OrtGetApiBase";
            code = 1;
        }
    }
    uint32_t api_version = 0;
    if (!code) {
        const OrtApiBase *base = get_base();
        version = base->GetVersionString();
        for (size_t i = 0; i < sizeof api_versions / sizeof api_versions[0] && !api; i++) {
            api = (void *const *)base->GetApi(api_versions[i]);
            api_version = api_versions[i];
        }
        if (!api) {
            snprintf(last_error, sizeof last_error, "ONNX Runtime %s offers none of the C API versions asked", version);
            failed = "GetApi";
            code = 1;
        }
    }
    if (!code && (code = failed_with(CALL(SLOT_CREATE_ENV, fn_create_env)(ORT_LOGGING_LEVEL_FATAL, "topkspec", &env))))
        failed = "CreateEnv";
    if (!code && (code = failed_with(CALL(SLOT_CREATE_CPU_MEMORY_INFO, fn_cpu_memory_info)(
                      ORT_ARENA_ALLOCATOR, ORT_MEM_TYPE_DEFAULT, &memory_info))))
        failed = "CreateCpuMemoryInfo";
    if (!code) code = make_options(ort, dml, &failed);
    double start_ms = (now_us() - start) / 1000;

    bytes info = {0};
    char number[128], path[MAX_PATH * 4];
    snprintf(number, sizeof number, "{\"protocol\": %d, \"api_version\": %u, \"start_ms\": %.3f", WORKER_PROTOCOL,
             api_version, start_ms);
    put_text(&info, number);
    put_text(&info, ", \"failed\": ");
    put_json_string(&info, failed);
    put_text(&info, ", \"error\": ");
    put_json_string(&info, code ? last_error : "");
    put_text(&info, ", \"onnxruntime\": ");
    put_json_string(&info, version);
    put_text(&info, ", \"provider\": ");
    put_json_string(&info, dml ? "DmlExecutionProvider" : "CPUExecutionProvider");
    module_path(L"onnxruntime.dll", path, sizeof path);
    put_text(&info, ", \"onnxruntime_dll\": ");
    put_json_string(&info, path);
    module_path(L"DirectML.dll", path, sizeof path);
    put_text(&info, ", \"directml_dll\": ");
    put_json_string(&info, path);
    put_text(&info, ", \"providers\": [");
    char **names = NULL;
    int count = 0;
    if (api && !failed_with(CALL(SLOT_GET_AVAILABLE_PROVIDERS, fn_providers)(&names, &count))) {
        for (int i = 0; i < count; i++) {
            if (i) put_text(&info, ", ");
            put_json_string(&info, names[i]);
        }
        CALL(SLOT_RELEASE_AVAILABLE_PROVIDERS, fn_release_providers)(names, count);
    }
    put_text(&info, "]}");
    if (!reply(code ? E_FAIL : S_OK, STAGE_DEVICE, &info)) return 2;
    free(info.data);
    if (code) return 1;
    return serve(handle_request);
}
