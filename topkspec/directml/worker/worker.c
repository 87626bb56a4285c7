/*
 * topk_worker: drives DirectML's TOP_K and TOP_K1 operators for topkspec.
 *
 * One process serves many requests over a framed binary protocol on its standard streams
 * (see topkspec/directml/worker/protocol.py, which is the other end and documents it).
 * At start it loads DirectML.dll from the path it is given, picks an adapter, creates the
 * D3D12 and DML devices, asks the device for its feature level and per-type support, and
 * writes one "ready" frame. Then, per request:
 *
 *   CREATE   IDMLDevice::CreateOperator on the descriptor exactly as given: DirectML's verdict.
 *   EXECUTE  create, compile, initialize (cached per descriptor), upload the input, dispatch,
 *            read both outputs back.
 *   CRASH / HANG  misbehave on purpose, so the suite's crash and hang handling can be tested.
 *   QUIT     leave.
 *
 * With --replay DIR it answers no requests: it runs the corpus cases in DIR (`topkspec corpus`)
 * and prints a verdict for each (see "corpus cases" below).
 *
 * DirectML.h is not part of mingw-w64, so the few DirectML types, interface ids and vtable
 * slots this program needs are declared below from DirectML's public reference pages.
 * Built with mingw-w64 or `zig cc -target x86_64-windows-gnu`:
 *   cc -O1 worker.c -o topk_worker.exe -ld3d12 -ldxgi
 */
#define COBJMACROS
#include "worker_io.h" /* the protocol's frames, buffers, clock and request loop */
#include <initguid.h> /* the D3D12 and DXGI interface ids are defined here, not linked */
#include <d3d12.h>
#include <dxgi1_4.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the protocol (mirrors protocol.py) ------------------------------------------------ */

#define CMD_CREATE 2
#define CMD_EXECUTE 3
#define CMD_EXECUTE_LAYOUT 8 /* EXECUTE with bindings, guard bytes, execution flags and a graph */

/* Where an EXECUTE stopped (the status is that step's HRESULT). */
#define STAGE_CREATE 1
#define STAGE_COMPILE 2
#define STAGE_INITIALIZE 3
#define STAGE_EXECUTE 4
#define STAGE_READBACK 5

#define MAX_DIMS 16
#define CACHE_SLOTS 48

/* ---- DirectML declarations ------------------------------------------------------------- */

#define DMLW_TENSOR_TYPE_BUFFER 1
#define DMLW_FEATURE_TENSOR_DATA_TYPE_SUPPORT 0
#define DMLW_FEATURE_FEATURE_LEVELS 1
#define DMLW_BINDING_TYPE_NONE 0
#define DMLW_BINDING_TYPE_BUFFER 1
#define DMLW_OPERATOR_TOP_K 71
#define DMLW_OPERATOR_ELEMENT_WISE_IDENTITY 1
#define DMLW_EXECUTION_FLAG_DESCRIPTORS_VOLATILE 0x4
#define DMLW_GRAPH_NODE_TYPE_OPERATOR 1
#define DMLW_GRAPH_EDGE_TYPE_INPUT 1
#define DMLW_GRAPH_EDGE_TYPE_OUTPUT 2
#define DMLW_GRAPH_EDGE_TYPE_INTERMEDIATE 3

typedef struct {
    UINT DataType;
    UINT Flags;
    UINT DimensionCount;
    const UINT *Sizes;
    const UINT *Strides;
    UINT64 TotalTensorSizeInBytes;
    UINT GuaranteedBaseOffsetAlignment;
} dmlw_buffer_tensor_desc;

typedef struct {
    UINT Type;
    const void *Desc;
} dmlw_tensor_desc;

typedef struct {
    UINT Type;
    const void *Desc;
} dmlw_operator_desc;

typedef struct { /* DML_TOP_K_OPERATOR_DESC */
    const dmlw_tensor_desc *InputTensor;
    const dmlw_tensor_desc *OutputValueTensor;
    const dmlw_tensor_desc *OutputIndexTensor;
    UINT Axis;
    UINT K;
} dmlw_top_k_desc;

typedef struct { /* DML_TOP_K1_OPERATOR_DESC */
    const dmlw_tensor_desc *InputTensor;
    const dmlw_tensor_desc *OutputValueTensor;
    const dmlw_tensor_desc *OutputIndexTensor;
    UINT Axis;
    UINT K;
    UINT AxisDirection;
} dmlw_top_k1_desc;

typedef struct { /* DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC */
    const dmlw_tensor_desc *InputTensor;
    const dmlw_tensor_desc *OutputTensor;
    const void *ScaleBias;
} dmlw_identity_desc;

/* DML_GRAPH_DESC and its parts (IDMLDevice1::CompileGraph). */
typedef struct { UINT Type; const void *Desc; } dmlw_graph_node_desc, dmlw_graph_edge_desc;
typedef struct { void *Operator; const char *Name; } dmlw_operator_graph_node_desc;
typedef struct { UINT GraphInputIndex, ToNodeIndex, ToNodeInputIndex; const char *Name; } dmlw_input_edge;
typedef struct { UINT FromNodeIndex, FromNodeOutputIndex, GraphOutputIndex; const char *Name; } dmlw_output_edge;
typedef struct { UINT FromNodeIndex, FromNodeOutputIndex, ToNodeIndex, ToNodeInputIndex; const char *Name; } dmlw_intermediate_edge;
typedef struct {
    UINT InputCount, OutputCount;
    UINT NodeCount;
    const dmlw_graph_node_desc *Nodes;
    UINT InputEdgeCount;
    const dmlw_graph_edge_desc *InputEdges;
    UINT OutputEdgeCount;
    const dmlw_graph_edge_desc *OutputEdges;
    UINT IntermediateEdgeCount;
    const dmlw_graph_edge_desc *IntermediateEdges;
} dmlw_graph_desc;

typedef struct {
    UINT RequiredDescriptorCount;
    UINT64 TemporaryResourceSize;
    UINT64 PersistentResourceSize;
} dmlw_binding_properties;

typedef struct {
    void *Dispatchable;
    D3D12_CPU_DESCRIPTOR_HANDLE CPUDescriptorHandle;
    D3D12_GPU_DESCRIPTOR_HANDLE GPUDescriptorHandle;
    UINT SizeInDescriptors;
} dmlw_binding_table_desc;

typedef struct {
    UINT Type;
    const void *Desc;
} dmlw_binding_desc;

typedef struct {
    ID3D12Resource *Buffer;
    UINT64 Offset;
    UINT64 SizeInBytes;
} dmlw_buffer_binding;

typedef struct {
    UINT RequestedFeatureLevelCount;
    const UINT *RequestedFeatureLevels;
} dmlw_query_feature_levels;

/* Interface ids. */
static const GUID IID_DMLDevice = {0x6dbd6437, 0x96fd, 0x423f, {0xa9, 0x8c, 0xae, 0x5e, 0x7c, 0x2a, 0x57, 0x3f}};
static const GUID IID_DMLDevice1 = {0xa0884f9a, 0xd2be, 0x4355, {0xaa, 0x5d, 0x59, 0x01, 0x28, 0x1a, 0xd1, 0xd2}};
static const GUID IID_DMLOperator = {0x26caae7a, 0x3081, 0x4633, {0x95, 0x81, 0x22, 0x6f, 0xbe, 0x57, 0x69, 0x5d}};
static const GUID IID_DMLCompiledOperator = {0x6b15e56a, 0xbf5c, 0x4902, {0x92, 0xd8, 0xda, 0x3a, 0x65, 0x0a, 0xfe, 0xa4}};
static const GUID IID_DMLOperatorInitializer = {0x427c1113, 0x435c, 0x469c, {0x86, 0x76, 0x4d, 0x5d, 0xd0, 0x72, 0xf8, 0x13}};
static const GUID IID_DMLBindingTable = {0x29c687dc, 0xde74, 0x4e3b, {0xab, 0x00, 0x11, 0x68, 0xf2, 0xfc, 0x3c, 0xfc}};
static const GUID IID_DMLCommandRecorder = {0xe6857a76, 0x2e3e, 0x4fdd, {0xbf, 0xf4, 0x5d, 0x2b, 0xa1, 0x0f, 0xb4, 0x53}};

/* Vtable slots: IUnknown 0-2, IDMLObject 3-6, then each interface's own methods in order. */
#define SLOT_RELEASE 2
#define SLOT_DEVICE_CHECK_FEATURE_SUPPORT 7
#define SLOT_DEVICE_CREATE_OPERATOR 8
#define SLOT_DEVICE_COMPILE_OPERATOR 9
#define SLOT_DEVICE_CREATE_OPERATOR_INITIALIZER 10
#define SLOT_DEVICE_CREATE_COMMAND_RECORDER 11
#define SLOT_DEVICE_CREATE_BINDING_TABLE 12
#define SLOT_DEVICE_GET_DEVICE_REMOVED_REASON 15
#define SLOT_DEVICE1_COMPILE_GRAPH 17 /* IDMLDevice1, after IDMLDevice's GetParentDevice (16) */
#define SLOT_QUERY_INTERFACE 0
#define SLOT_DISPATCHABLE_GET_BINDING_PROPERTIES 8 /* IDMLDeviceChild::GetDevice is 7 */
#define SLOT_TABLE_BIND_INPUTS 8
#define SLOT_TABLE_BIND_OUTPUTS 9
#define SLOT_TABLE_BIND_TEMPORARY 10
#define SLOT_TABLE_BIND_PERSISTENT 11
#define SLOT_TABLE_RESET 12
#define SLOT_RECORDER_RECORD_DISPATCH 8

#define VT(obj) (*(void ***)(obj))

typedef ULONG(STDMETHODCALLTYPE *fn_release)(void *);
typedef HRESULT(STDMETHODCALLTYPE *fn_check_feature)(void *, UINT, UINT, const void *, UINT, void *);
typedef HRESULT(STDMETHODCALLTYPE *fn_create_operator)(void *, const dmlw_operator_desc *, REFIID, void **);
typedef HRESULT(STDMETHODCALLTYPE *fn_compile_operator)(void *, void *, UINT, REFIID, void **);
typedef HRESULT(STDMETHODCALLTYPE *fn_create_initializer)(void *, UINT, void *const *, REFIID, void **);
typedef HRESULT(STDMETHODCALLTYPE *fn_create_recorder)(void *, REFIID, void **);
typedef HRESULT(STDMETHODCALLTYPE *fn_create_table)(void *, const dmlw_binding_table_desc *, REFIID, void **);
typedef HRESULT(STDMETHODCALLTYPE *fn_removed_reason)(void *);
typedef HRESULT(STDMETHODCALLTYPE *fn_query_interface)(void *, REFIID, void **);
typedef HRESULT(STDMETHODCALLTYPE *fn_compile_graph)(void *, const dmlw_graph_desc *, UINT, REFIID, void **);
/* GetBindingProperties returns a struct by value: under the MSVC member-function convention
   the caller passes the return slot right after `this` and gets it back. */
typedef dmlw_binding_properties *(STDMETHODCALLTYPE *fn_binding_properties)(void *, dmlw_binding_properties *);
typedef void(STDMETHODCALLTYPE *fn_bind_many)(void *, UINT, const dmlw_binding_desc *);
typedef void(STDMETHODCALLTYPE *fn_bind_one)(void *, const dmlw_binding_desc *);
typedef HRESULT(STDMETHODCALLTYPE *fn_table_reset)(void *, const dmlw_binding_table_desc *);
typedef void(STDMETHODCALLTYPE *fn_record_dispatch)(void *, ID3D12CommandList *, void *, void *);
typedef HRESULT(WINAPI *fn_dml_create_device1)(ID3D12Device *, UINT, UINT, REFIID, void **);
typedef HRESULT(WINAPI *fn_dml_create_device)(ID3D12Device *, UINT, REFIID, void **);

static void release(void *obj) {
    if (obj) ((fn_release)VT(obj)[SLOT_RELEASE])(obj);
}

static dmlw_binding_properties binding_properties(void *dispatchable) {
    dmlw_binding_properties props;
    memset(&props, 0, sizeof props);
    ((fn_binding_properties)VT(dispatchable)[SLOT_DISPATCHABLE_GET_BINDING_PROPERTIES])(dispatchable, &props);
    return props;
}

/* ---- the device ------------------------------------------------------------------------- */

static HMODULE dml_module;
static int trace; /* TOPK_WORKER_TRACE set: say what happens on stderr */
static ID3D12Device *d3d;
static void *dml;
static ID3D12CommandQueue *queue;
static ID3D12CommandAllocator *allocator;
static ID3D12GraphicsCommandList *list;
static ID3D12Fence *fence;
static HANDLE fence_event;
static UINT64 fence_value;
static void *recorder;
static ID3D12Resource *upload, *readback;
static UINT64 upload_size, readback_size;

/* Old DirectML releases (before 1.8) divide by the device's WaveLaneCountMin, which vkd3d
   reports as 0: with --lane-workaround the device answers D3D12_OPTIONS1 with non-zero lane
   counts (on a copy of its vtable). */
typedef HRESULT(STDMETHODCALLTYPE *fn_d3d_check_feature)(ID3D12Device *, D3D12_FEATURE, void *, UINT);
static fn_d3d_check_feature original_check_feature;
static void *patched_vtable[512];

static HRESULT STDMETHODCALLTYPE check_feature_with_lanes(ID3D12Device *self, D3D12_FEATURE feature, void *data,
                                                          UINT size) {
    HRESULT hr = original_check_feature(self, feature, data, size);
    if (SUCCEEDED(hr) && feature == D3D12_FEATURE_D3D12_OPTIONS1 && size >= sizeof(D3D12_FEATURE_DATA_D3D12_OPTIONS1)) {
        D3D12_FEATURE_DATA_D3D12_OPTIONS1 *options = data;
        if (options->WaveLaneCountMin == 0) options->WaveLaneCountMin = 8;
        if (options->WaveLaneCountMax == 0) options->WaveLaneCountMax = 8;
        if (options->TotalLaneCount == 0) options->TotalLaneCount = 8;
    }
    return hr;
}

static int apply_lane_workaround(ID3D12Device *device) {
    D3D12_FEATURE_DATA_D3D12_OPTIONS1 options;
    memset(&options, 0, sizeof options);
    if (FAILED(ID3D12Device_CheckFeatureSupport(device, D3D12_FEATURE_D3D12_OPTIONS1, &options, sizeof options)))
        return 0;
    if (options.WaveLaneCountMin != 0) return 0;
    void **vtable = VT(device);
    MEMORY_BASIC_INFORMATION region;
    size_t count = sizeof patched_vtable / sizeof patched_vtable[0];
    if (VirtualQuery(vtable, &region, sizeof region)) {
        size_t left = ((char *)region.BaseAddress + region.RegionSize - (char *)vtable) / sizeof(void *);
        if (left < count) count = left;
    }
    memcpy(patched_vtable, vtable, count * sizeof(void *));
    size_t slot = offsetof(ID3D12DeviceVtbl, CheckFeatureSupport) / sizeof(void *);
    original_check_feature = (fn_d3d_check_feature)vtable[slot];
    patched_vtable[slot] = (void *)check_feature_with_lanes;
    *(void ***)device = patched_vtable;
    return 1;
}

/* Newer vkd3d (1.14, in Wine 10) exposes ID3D12Device5 with EnumerateMetaCommands a stub that
   returns E_NOTIMPL, and DMLCreateDevice1 then fails with E_NOTIMPL. With
   --metacommand-workaround that answer becomes "no meta commands" (S_OK, count 0), what a
   driver without them answers. Slot 59 is ID3D12Device5::EnumerateMetaCommands (IUnknown 3,
   ID3D12Object 4, ID3D12Device 37, Device1 3, Device2 1, Device3 3, Device4 6, then
   CreateLifetimeTracker and RemoveDevice). */
#define SLOT_ENUMERATE_META_COMMANDS 59
typedef HRESULT(STDMETHODCALLTYPE *fn_enum_meta)(void *, UINT *, void *);
static fn_enum_meta original_enum_meta;
static void *meta_vtable[512];

static HRESULT STDMETHODCALLTYPE enum_meta_none(void *self, UINT *count, void *descs) {
    HRESULT hr = original_enum_meta(self, count, descs);
    if (hr != E_NOTIMPL) return hr;
    if (count) *count = 0;
    return S_OK;
}

static int apply_metacommand_workaround(ID3D12Device *device) {
    static const GUID iid_device5 = {0x8b4f173b, 0x2fea, 0x4b80, {0x8f, 0x58, 0x43, 0x07, 0x19, 0x1a, 0xb9, 0x5d}};
    void *device5 = NULL;
    if (FAILED(ID3D12Device_QueryInterface(device, &iid_device5, &device5)) || !device5) return 0;
    ID3D12Device_Release((ID3D12Device *)device5);
    if (device5 != (void *)device) return 0; /* a separate interface pointer: not handled */
    void **vtable = VT(device);
    MEMORY_BASIC_INFORMATION region;
    size_t count = sizeof meta_vtable / sizeof meta_vtable[0];
    if (VirtualQuery(vtable, &region, sizeof region)) {
        size_t left = ((char *)region.BaseAddress + region.RegionSize - (char *)vtable) / sizeof(void *);
        if (left < count) count = left;
    }
    if (count <= SLOT_ENUMERATE_META_COMMANDS) return 0;
    memcpy(meta_vtable, vtable, count * sizeof(void *));
    original_enum_meta = (fn_enum_meta)vtable[SLOT_ENUMERATE_META_COMMANDS];
    meta_vtable[SLOT_ENUMERATE_META_COMMANDS] = (void *)enum_meta_none;
    *(void ***)device = meta_vtable;
    return 1;
}

static void wide_to_utf8(const WCHAR *wide, char *out, int size) {
    if (!WideCharToMultiByte(CP_UTF8, 0, wide, -1, out, size, NULL, NULL)) out[0] = 0;
}

static int contains_nocase(const char *haystack, const char *needle) {
    size_t n = strlen(needle);
    for (; *haystack; haystack++)
        if (_strnicmp(haystack, needle, n) == 0) return 1;
    return n == 0;
}

typedef struct {
    char adapter[256];
    UINT vendor, device_id;
    int software;
    UINT64 memory;
} adapter_info;

static void describe_adapter(IDXGIAdapter1 *adapter, adapter_info *info) {
    DXGI_ADAPTER_DESC1 desc;
    memset(&desc, 0, sizeof desc);
    IDXGIAdapter1_GetDesc1(adapter, &desc);
    wide_to_utf8(desc.Description, info->adapter, sizeof info->adapter);
    info->vendor = desc.VendorId;
    info->device_id = desc.DeviceId;
    info->software = (desc.Flags & DXGI_ADAPTER_FLAG_SOFTWARE) != 0;
    info->memory = desc.DedicatedVideoMemory;
}

/* Picks the adapter: "auto" tries hardware adapters first, then software ones, then WARP;
   "warp" asks for WARP; anything else is a case-insensitive part of an adapter's name. */
static HRESULT create_d3d_device(const char *want, adapter_info *chosen, bytes *listing) {
    IDXGIFactory4 *factory = NULL;
    HRESULT hr = CreateDXGIFactory1(&IID_IDXGIFactory4, (void **)&factory);
    HRESULT last = hr;
    put_text(listing, "[");
    if (SUCCEEDED(hr)) {
        IDXGIAdapter1 *adapter = NULL;
        for (UINT i = 0; IDXGIFactory4_EnumAdapters1(factory, i, &adapter) == S_OK; i++) {
            adapter_info info;
            describe_adapter(adapter, &info);
            if (i) put_text(listing, ", ");
            put_json_string(listing, info.adapter);
            IDXGIAdapter1_Release(adapter);
        }
        put_text(listing, "]");
        int is_warp = _stricmp(want, "warp") == 0, is_auto = _stricmp(want, "auto") == 0;
        for (int pass = 0; pass < 2 && !d3d && !is_warp; pass++) {
            for (UINT i = 0; !d3d && IDXGIFactory4_EnumAdapters1(factory, i, &adapter) == S_OK; i++) {
                adapter_info info;
                describe_adapter(adapter, &info);
                int wanted = is_auto ? (pass == 0 ? !info.software : info.software)
                                     : (pass == 0 && contains_nocase(info.adapter, want));
                if (wanted) {
                    last = D3D12CreateDevice((IUnknown *)adapter, D3D_FEATURE_LEVEL_11_0, &IID_ID3D12Device, (void **)&d3d);
                    if (SUCCEEDED(last)) *chosen = info;
                }
                IDXGIAdapter1_Release(adapter);
            }
        }
        if (!d3d && (is_warp || is_auto)) {
            if (SUCCEEDED(IDXGIFactory4_EnumWarpAdapter(factory, &IID_IDXGIAdapter1, (void **)&adapter))) {
                describe_adapter(adapter, chosen);
                chosen->software = 1;
                last = D3D12CreateDevice((IUnknown *)adapter, D3D_FEATURE_LEVEL_11_0, &IID_ID3D12Device, (void **)&d3d);
                IDXGIAdapter1_Release(adapter);
            }
        }
        IDXGIFactory4_Release(factory);
    } else {
        put_text(listing, "]");
    }
    if (!d3d && _stricmp(want, "auto") == 0) {
        last = D3D12CreateDevice(NULL, D3D_FEATURE_LEVEL_11_0, &IID_ID3D12Device, (void **)&d3d);
        if (SUCCEEDED(last)) strcpy(chosen->adapter, "(default adapter)");
    }
    if (!d3d && SUCCEEDED(last)) last = DXGI_ERROR_NOT_FOUND;
    return d3d ? S_OK : last;
}

static HRESULT create_queue(void) {
    D3D12_COMMAND_QUEUE_DESC desc;
    memset(&desc, 0, sizeof desc);
    desc.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
    HRESULT hr = ID3D12Device_CreateCommandQueue(d3d, &desc, &IID_ID3D12CommandQueue, (void **)&queue);
    if (SUCCEEDED(hr))
        hr = ID3D12Device_CreateCommandAllocator(d3d, D3D12_COMMAND_LIST_TYPE_DIRECT, &IID_ID3D12CommandAllocator,
                                                 (void **)&allocator);
    if (SUCCEEDED(hr))
        hr = ID3D12Device_CreateCommandList(d3d, 0, D3D12_COMMAND_LIST_TYPE_DIRECT, allocator, NULL,
                                            &IID_ID3D12GraphicsCommandList, (void **)&list);
    if (SUCCEEDED(hr)) hr = ID3D12GraphicsCommandList_Close(list);
    if (SUCCEEDED(hr)) hr = ID3D12Device_CreateFence(d3d, 0, D3D12_FENCE_FLAG_NONE, &IID_ID3D12Fence, (void **)&fence);
    if (SUCCEEDED(hr)) {
        fence_event = CreateEventW(NULL, FALSE, FALSE, NULL);
        if (!fence_event) hr = HRESULT_FROM_WIN32(GetLastError());
    }
    if (SUCCEEDED(hr))
        hr = ((fn_create_recorder)VT(dml)[SLOT_DEVICE_CREATE_COMMAND_RECORDER])(dml, &IID_DMLCommandRecorder, &recorder);
    return hr;
}

static HRESULT device_status(void) {
    HRESULT hr = ID3D12Device_GetDeviceRemovedReason(d3d);
    if (SUCCEEDED(hr)) hr = ((fn_removed_reason)VT(dml)[SLOT_DEVICE_GET_DEVICE_REMOVED_REASON])(dml);
    return hr;
}

/* Runs the recorded command list and waits for it. */
static HRESULT submit_and_wait(void) {
    HRESULT hr = ID3D12GraphicsCommandList_Close(list);
    if (FAILED(hr)) return hr;
    ID3D12CommandList *lists[1] = {(ID3D12CommandList *)list};
    ID3D12CommandQueue_ExecuteCommandLists(queue, 1, lists);
    hr = ID3D12CommandQueue_Signal(queue, fence, ++fence_value);
    if (FAILED(hr)) return hr;
    if (ID3D12Fence_GetCompletedValue(fence) < fence_value) {
        hr = ID3D12Fence_SetEventOnCompletion(fence, fence_value, fence_event);
        if (FAILED(hr)) return hr;
        WaitForSingleObject(fence_event, INFINITE);
    }
    return device_status();
}

static HRESULT begin_commands(void) {
    HRESULT hr = ID3D12CommandAllocator_Reset(allocator);
    if (SUCCEEDED(hr)) hr = ID3D12GraphicsCommandList_Reset(list, allocator, NULL);
    return hr;
}

static HRESULT make_buffer(D3D12_HEAP_TYPE heap_type, UINT64 size, D3D12_RESOURCE_FLAGS flags,
                           D3D12_RESOURCE_STATES state, ID3D12Resource **out) {
    D3D12_HEAP_PROPERTIES heap;
    memset(&heap, 0, sizeof heap);
    heap.Type = heap_type;
    D3D12_RESOURCE_DESC desc;
    memset(&desc, 0, sizeof desc);
    desc.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER;
    desc.Width = (size + 255) & ~(UINT64)255;
    if (desc.Width == 0) desc.Width = 256;
    desc.Height = 1;
    desc.DepthOrArraySize = 1;
    desc.MipLevels = 1;
    desc.Format = DXGI_FORMAT_UNKNOWN;
    desc.SampleDesc.Count = 1;
    desc.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR;
    desc.Flags = flags;
    return ID3D12Device_CreateCommittedResource(d3d, &heap, D3D12_HEAP_FLAG_NONE, &desc, state, NULL,
                                                &IID_ID3D12Resource, (void **)out);
}

static void transition(ID3D12Resource *resource, D3D12_RESOURCE_STATES before, D3D12_RESOURCE_STATES after) {
    D3D12_RESOURCE_BARRIER barrier;
    memset(&barrier, 0, sizeof barrier);
    barrier.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
    barrier.Transition.pResource = resource;
    barrier.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
    barrier.Transition.StateBefore = before;
    barrier.Transition.StateAfter = after;
    ID3D12GraphicsCommandList_ResourceBarrier(list, 1, &barrier);
}

static void uav_barrier(void) {
    D3D12_RESOURCE_BARRIER barrier;
    memset(&barrier, 0, sizeof barrier);
    barrier.Type = D3D12_RESOURCE_BARRIER_TYPE_UAV;
    ID3D12GraphicsCommandList_ResourceBarrier(list, 1, &barrier);
}

/* ---- descriptors as they arrive --------------------------------------------------------- */

typedef struct {
    UINT op_type, axis, k, direction;
    dmlw_buffer_tensor_desc buffers[3];
    dmlw_tensor_desc tensors[3];
    UINT sizes[3][MAX_DIMS], strides[3][MAX_DIMS];
    dmlw_top_k_desc top_k;
    dmlw_top_k1_desc top_k1;
    dmlw_operator_desc op;
} parsed_desc;

/* Operator descriptor: u32 op_type, axis, k, direction; then three tensors (input, values,
   indices), each u32 tensor_type, data_type, flags, dimension_count, has_strides, u64
   total_size, u32 alignment, u32 sizes[dimension_count], u32 strides[dimension_count] when
   has_strides. Every field goes into the DML structs as it came. */
static int parse_desc(reader *r, parsed_desc *d) {
    memset(d, 0, sizeof *d);
    d->op_type = get_u32(r);
    d->axis = get_u32(r);
    d->k = get_u32(r);
    d->direction = get_u32(r);
    for (int t = 0; t < 3 && r->ok; t++) {
        dmlw_buffer_tensor_desc *b = &d->buffers[t];
        d->tensors[t].Type = get_u32(r);
        b->DataType = get_u32(r);
        b->Flags = get_u32(r);
        b->DimensionCount = get_u32(r);
        UINT has_strides = get_u32(r);
        b->TotalTensorSizeInBytes = get_u64(r);
        b->GuaranteedBaseOffsetAlignment = get_u32(r);
        if (b->DimensionCount > MAX_DIMS) return 0;
        for (UINT i = 0; i < b->DimensionCount; i++) d->sizes[t][i] = get_u32(r);
        if (has_strides)
            for (UINT i = 0; i < b->DimensionCount; i++) d->strides[t][i] = get_u32(r);
        b->Sizes = d->sizes[t];
        b->Strides = has_strides ? d->strides[t] : NULL;
        d->tensors[t].Desc = b;
    }
    if (!r->ok) return 0;
    d->top_k.InputTensor = d->top_k1.InputTensor = &d->tensors[0];
    d->top_k.OutputValueTensor = d->top_k1.OutputValueTensor = &d->tensors[1];
    d->top_k.OutputIndexTensor = d->top_k1.OutputIndexTensor = &d->tensors[2];
    d->top_k.Axis = d->top_k1.Axis = d->axis;
    d->top_k.K = d->top_k1.K = d->k;
    d->top_k1.AxisDirection = d->direction;
    d->op.Type = d->op_type;
    d->op.Desc = d->op_type == DMLW_OPERATOR_TOP_K ? (const void *)&d->top_k : (const void *)&d->top_k1;
    return 1;
}

/* How EXECUTE_LAYOUT lays the call out (EXECUTE: offsets 0, each buffer TotalTensorSizeInBytes,
   no flags, alone): u32 flags, u32 graph, then per tensor u64 binding offset and u64 buffer
   bytes, then u32 fill (the byte both output buffers hold before the call). */
typedef struct {
    UINT flags, graph, fill;
    UINT64 offsets[3], buffers[3];
} call_layout;

static void plain_layout(const parsed_desc *d, call_layout *l) {
    memset(l, 0, sizeof *l);
    for (int t = 0; t < 3; t++) l->buffers[t] = d->buffers[t].TotalTensorSizeInBytes;
}

static int parse_layout(reader *r, const parsed_desc *d, call_layout *l) {
    memset(l, 0, sizeof *l);
    l->flags = get_u32(r);
    l->graph = get_u32(r);
    for (int t = 0; t < 3; t++) {
        l->offsets[t] = get_u64(r);
        l->buffers[t] = get_u64(r);
        if (r->ok && l->buffers[t] < l->offsets[t] + d->buffers[t].TotalTensorSizeInBytes) return 0;
    }
    l->fill = get_u32(r);
    return r->ok;
}

/* A packed copy of a tensor desc (the graph's inner edges). */
static uint64_t packed_bytes(const dmlw_buffer_tensor_desc *b) {
    static const UINT sizes[] = {4, 4, 2, 4, 2, 1, 4, 2, 1, 8, 8, 8};
    uint64_t count = 1;
    for (UINT i = 0; i < b->DimensionCount; i++) count *= b->Sizes[i];
    return (count * (b->DataType < 12 ? sizes[b->DataType] : 4) + 3) & ~(uint64_t)3;
}

/* CompileGraph on: identity (input as laid out -> packed), the TopK (packed input and values,
   indices as laid out), identity (packed values -> values as laid out). */
static HRESULT compile_graph(parsed_desc *d, UINT flags, void **compiled) {
    void *dml1 = NULL, *ops[3] = {NULL, NULL, NULL};
    HRESULT hr = ((fn_query_interface)VT(dml)[SLOT_QUERY_INTERFACE])(dml, &IID_DMLDevice1, &dml1);
    if (FAILED(hr)) return hr;
    dmlw_buffer_tensor_desc packed_in = d->buffers[0], packed_values = d->buffers[1];
    packed_in.Strides = packed_values.Strides = NULL;
    packed_in.TotalTensorSizeInBytes = packed_bytes(&packed_in);
    packed_values.TotalTensorSizeInBytes = packed_bytes(&packed_values);
    packed_in.GuaranteedBaseOffsetAlignment = packed_values.GuaranteedBaseOffsetAlignment = 0;
    dmlw_tensor_desc in_desc = {DMLW_TENSOR_TYPE_BUFFER, &packed_in}, values_desc = {DMLW_TENSOR_TYPE_BUFFER, &packed_values};
    dmlw_identity_desc before = {&d->tensors[0], &in_desc, NULL}, after = {&values_desc, &d->tensors[1], NULL};
    dmlw_top_k_desc top_k = d->top_k;
    dmlw_top_k1_desc top_k1 = d->top_k1;
    top_k.InputTensor = top_k1.InputTensor = &in_desc;
    top_k.OutputValueTensor = top_k1.OutputValueTensor = &values_desc;
    dmlw_operator_desc descs[3] = {{DMLW_OPERATOR_ELEMENT_WISE_IDENTITY, &before},
                                   {d->op_type, d->op_type == DMLW_OPERATOR_TOP_K ? (const void *)&top_k : (const void *)&top_k1},
                                   {DMLW_OPERATOR_ELEMENT_WISE_IDENTITY, &after}};
    for (int i = 0; i < 3 && SUCCEEDED(hr); i++)
        hr = ((fn_create_operator)VT(dml)[SLOT_DEVICE_CREATE_OPERATOR])(dml, &descs[i], &IID_DMLOperator, &ops[i]);
    if (SUCCEEDED(hr)) {
        dmlw_operator_graph_node_desc node_descs[3] = {{ops[0], "before"}, {ops[1], "topk"}, {ops[2], "after"}};
        dmlw_graph_node_desc nodes[3];
        for (int i = 0; i < 3; i++) nodes[i] = (dmlw_graph_node_desc){DMLW_GRAPH_NODE_TYPE_OPERATOR, &node_descs[i]};
        dmlw_input_edge input = {0, 0, 0, "x"};
        dmlw_intermediate_edge inner[2] = {{0, 0, 1, 0, "x_copy"}, {1, 0, 2, 0, "values_packed"}};
        dmlw_output_edge outputs[2] = {{2, 0, 0, "values"}, {1, 1, 1, "indices"}};
        dmlw_graph_edge_desc in_edges[1] = {{DMLW_GRAPH_EDGE_TYPE_INPUT, &input}};
        dmlw_graph_edge_desc inner_edges[2] = {{DMLW_GRAPH_EDGE_TYPE_INTERMEDIATE, &inner[0]},
                                               {DMLW_GRAPH_EDGE_TYPE_INTERMEDIATE, &inner[1]}};
        dmlw_graph_edge_desc out_edges[2] = {{DMLW_GRAPH_EDGE_TYPE_OUTPUT, &outputs[0]},
                                             {DMLW_GRAPH_EDGE_TYPE_OUTPUT, &outputs[1]}};
        dmlw_graph_desc graph = {1, 2, 3, nodes, 1, in_edges, 2, out_edges, 2, inner_edges};
        hr = ((fn_compile_graph)VT(dml1)[SLOT_DEVICE1_COMPILE_GRAPH])(dml1, &graph, flags, &IID_DMLCompiledOperator,
                                                                     compiled);
    }
    for (int i = 0; i < 3; i++) release(ops[i]);
    release(dml1);
    return hr;
}

/* ---- compiled operators, cached per descriptor ---------------------------------------- */

typedef struct {
    uint8_t *key;
    size_t key_size;
    uint64_t last_used;
    void *compiled;
    void *table;
    ID3D12DescriptorHeap *heap;
    UINT descriptors;
    ID3D12Resource *persistent, *temporary;
    dmlw_binding_properties exec_props;
    ID3D12Resource *buffers[3];
    UINT64 sizes[3]; /* each buffer's bytes */
    UINT64 offsets[3], ranges[3]; /* where each tensor is bound in its buffer, and how many bytes */
    UINT flags;
} cached_op;

static cached_op cache[CACHE_SLOTS];
static uint64_t use_clock;

static void drop(cached_op *c) {
    release(c->table);
    release(c->compiled);
    if (c->heap) ID3D12DescriptorHeap_Release(c->heap);
    if (c->persistent) ID3D12Resource_Release(c->persistent);
    if (c->temporary) ID3D12Resource_Release(c->temporary);
    for (int i = 0; i < 3; i++)
        if (c->buffers[i]) ID3D12Resource_Release(c->buffers[i]);
    free(c->key);
    memset(c, 0, sizeof *c);
}

static cached_op *find_cached(const uint8_t *key, size_t size) {
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (cache[i].key && cache[i].key_size == size && memcmp(cache[i].key, key, size) == 0) {
            cache[i].last_used = ++use_clock;
            return &cache[i];
        }
    return NULL;
}

static cached_op *free_slot(void) {
    cached_op *oldest = &cache[0];
    for (int i = 0; i < CACHE_SLOTS; i++) {
        if (!cache[i].key) return &cache[i];
        if (cache[i].last_used < oldest->last_used) oldest = &cache[i];
    }
    drop(oldest);
    return oldest;
}

static void bind_range(dmlw_buffer_binding *binding, dmlw_binding_desc *desc, ID3D12Resource *buffer, UINT64 offset,
                       UINT64 size) {
    binding->Buffer = buffer;
    binding->Offset = offset;
    binding->SizeInBytes = size;
    desc->Type = buffer ? DMLW_BINDING_TYPE_BUFFER : DMLW_BINDING_TYPE_NONE;
    desc->Desc = buffer ? binding : NULL;
}

static void bind_buffer(dmlw_buffer_binding *binding, dmlw_binding_desc *desc, ID3D12Resource *buffer, UINT64 size) {
    bind_range(binding, desc, buffer, 0, size);
}

/* The three tensors' bindings, as the call laid them out. */
static void bind_tensors(cached_op *c) {
    dmlw_buffer_binding buffers[3];
    dmlw_binding_desc bindings[3];
    for (int t = 0; t < 3; t++) bind_range(&buffers[t], &bindings[t], c->buffers[t], c->offsets[t], c->ranges[t]);
    ((fn_bind_many)VT(c->table)[SLOT_TABLE_BIND_INPUTS])(c->table, 1, &bindings[0]);
    ((fn_bind_many)VT(c->table)[SLOT_TABLE_BIND_OUTPUTS])(c->table, 2, &bindings[1]);
}

static void table_desc(cached_op *c, void *dispatchable, dmlw_binding_table_desc *desc) {
    memset(desc, 0, sizeof *desc);
    desc->Dispatchable = dispatchable;
    c->heap->lpVtbl->GetCPUDescriptorHandleForHeapStart(c->heap, &desc->CPUDescriptorHandle);
    c->heap->lpVtbl->GetGPUDescriptorHandleForHeapStart(c->heap, &desc->GPUDescriptorHandle);
    desc->SizeInDescriptors = c->descriptors;
}

static void record(void *dispatchable, void *table, ID3D12DescriptorHeap *heap) {
    ID3D12DescriptorHeap *heaps[1] = {heap};
    ID3D12GraphicsCommandList_SetDescriptorHeaps(list, 1, heaps);
    ((fn_record_dispatch)VT(recorder)[SLOT_RECORDER_RECORD_DISPATCH])(recorder, (ID3D12CommandList *)list,
                                                                      dispatchable, table);
}

/* Compiles and initializes an operator; on failure *stage says which step. */
static HRESULT build(cached_op *c, parsed_desc *d, const call_layout *l, uint32_t *stage, double *create_us,
                     double *compile_us) {
    void *op = NULL, *initializer = NULL;
    double start = now_us();
    *stage = STAGE_CREATE;
    HRESULT hr = ((fn_create_operator)VT(dml)[SLOT_DEVICE_CREATE_OPERATOR])(dml, &d->op, &IID_DMLOperator, &op);
    *create_us = now_us() - start;
    if (FAILED(hr)) return hr;
    start = now_us();
    *stage = STAGE_COMPILE;
    c->flags = l->flags;
    if (l->graph)
        hr = compile_graph(d, l->flags, &c->compiled);
    else
        hr = ((fn_compile_operator)VT(dml)[SLOT_DEVICE_COMPILE_OPERATOR])(dml, op, l->flags, &IID_DMLCompiledOperator,
                                                                          &c->compiled);
    release(op);
    if (FAILED(hr)) return hr;
    *stage = STAGE_INITIALIZE;
    hr = ((fn_create_initializer)VT(dml)[SLOT_DEVICE_CREATE_OPERATOR_INITIALIZER])(
        dml, 1, &c->compiled, &IID_DMLOperatorInitializer, &initializer);
    if (FAILED(hr)) return hr;
    dmlw_binding_properties init_props = binding_properties(initializer);
    c->exec_props = binding_properties(c->compiled);
    if (trace)
        fprintf(stderr, "topk_worker: initializer: %u descriptors, %llu temporary; operator: %u descriptors, "
                "%llu temporary, %llu persistent\n", init_props.RequiredDescriptorCount,
                (unsigned long long)init_props.TemporaryResourceSize, c->exec_props.RequiredDescriptorCount,
                (unsigned long long)c->exec_props.TemporaryResourceSize,
                (unsigned long long)c->exec_props.PersistentResourceSize);
    c->descriptors = init_props.RequiredDescriptorCount > c->exec_props.RequiredDescriptorCount
                         ? init_props.RequiredDescriptorCount
                         : c->exec_props.RequiredDescriptorCount;
    if (c->descriptors == 0) c->descriptors = 1;
    D3D12_DESCRIPTOR_HEAP_DESC heap_desc;
    memset(&heap_desc, 0, sizeof heap_desc);
    heap_desc.Type = D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV;
    heap_desc.NumDescriptors = c->descriptors;
    heap_desc.Flags = D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE;
    hr = ID3D12Device_CreateDescriptorHeap(d3d, &heap_desc, &IID_ID3D12DescriptorHeap, (void **)&c->heap);
    UINT64 temporary = init_props.TemporaryResourceSize > c->exec_props.TemporaryResourceSize
                           ? init_props.TemporaryResourceSize
                           : c->exec_props.TemporaryResourceSize;
    if (SUCCEEDED(hr) && temporary)
        hr = make_buffer(D3D12_HEAP_TYPE_DEFAULT, temporary, D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS,
                         D3D12_RESOURCE_STATE_UNORDERED_ACCESS, &c->temporary);
    if (SUCCEEDED(hr) && c->exec_props.PersistentResourceSize)
        hr = make_buffer(D3D12_HEAP_TYPE_DEFAULT, c->exec_props.PersistentResourceSize,
                         D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                         &c->persistent);
    for (int t = 0; t < 3 && SUCCEEDED(hr); t++) {
        c->sizes[t] = l->buffers[t];
        c->offsets[t] = l->offsets[t];
        c->ranges[t] = l->buffers[t] - l->offsets[t];
        hr = make_buffer(D3D12_HEAP_TYPE_DEFAULT, c->sizes[t], D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS,
                         t == 0 ? D3D12_RESOURCE_STATE_COPY_DEST : D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                         &c->buffers[t]);
    }
    dmlw_binding_table_desc tdesc;
    if (SUCCEEDED(hr)) {
        table_desc(c, initializer, &tdesc);
        hr = ((fn_create_table)VT(dml)[SLOT_DEVICE_CREATE_BINDING_TABLE])(dml, &tdesc, &IID_DMLBindingTable, &c->table);
    }
    if (SUCCEEDED(hr)) {
        dmlw_buffer_binding buffer;
        dmlw_binding_desc binding;
        if (init_props.TemporaryResourceSize) {
            bind_buffer(&buffer, &binding, c->temporary, init_props.TemporaryResourceSize);
            ((fn_bind_one)VT(c->table)[SLOT_TABLE_BIND_TEMPORARY])(c->table, &binding);
        }
        bind_buffer(&buffer, &binding, c->persistent, c->exec_props.PersistentResourceSize);
        ((fn_bind_many)VT(c->table)[SLOT_TABLE_BIND_OUTPUTS])(c->table, 1, &binding);
        hr = begin_commands();
        if (SUCCEEDED(hr)) {
            record(initializer, c->table, c->heap);
            hr = submit_and_wait();
        }
    }
    release(initializer);
    if (FAILED(hr)) return hr;
    /* The table now serves the compiled operator: input, two outputs, its resources. */
    table_desc(c, c->compiled, &tdesc);
    hr = ((fn_table_reset)VT(c->table)[SLOT_TABLE_RESET])(c->table, &tdesc);
    if (FAILED(hr)) return hr;
    dmlw_buffer_binding extra;
    dmlw_binding_desc binding;
    bind_tensors(c);
    if (c->exec_props.TemporaryResourceSize) {
        bind_buffer(&extra, &binding, c->temporary, c->exec_props.TemporaryResourceSize);
        ((fn_bind_one)VT(c->table)[SLOT_TABLE_BIND_TEMPORARY])(c->table, &binding);
    }
    if (c->exec_props.PersistentResourceSize) {
        bind_buffer(&extra, &binding, c->persistent, c->exec_props.PersistentResourceSize);
        ((fn_bind_one)VT(c->table)[SLOT_TABLE_BIND_PERSISTENT])(c->table, &binding);
    }
    *compile_us = now_us() - start;
    return S_OK;
}

static HRESULT ensure_staging(UINT64 in_size, UINT64 out_size) {
    HRESULT hr = S_OK;
    if (in_size > upload_size) {
        if (upload) ID3D12Resource_Release(upload);
        upload = NULL;
        upload_size = 0;
        hr = make_buffer(D3D12_HEAP_TYPE_UPLOAD, in_size, D3D12_RESOURCE_FLAG_NONE, D3D12_RESOURCE_STATE_GENERIC_READ,
                         &upload);
        if (SUCCEEDED(hr)) upload_size = in_size;
    }
    if (SUCCEEDED(hr) && out_size > readback_size) {
        if (readback) ID3D12Resource_Release(readback);
        readback = NULL;
        readback_size = 0;
        hr = make_buffer(D3D12_HEAP_TYPE_READBACK, out_size, D3D12_RESOURCE_FLAG_NONE, D3D12_RESOURCE_STATE_COPY_DEST,
                         &readback);
        if (SUCCEEDED(hr)) readback_size = out_size;
    }
    return hr;
}

/* EXECUTE: descriptor, u64 input size, input bytes. EXECUTE_LAYOUT: descriptor, the call's
   layout (parse_layout), u64 input size, the input buffer's bytes (its binding offset
   included). Reply payload: u64 size + bytes of the values buffer, the same for indices (with
   EXECUTE_LAYOUT each whole buffer, guard bytes included), then f64 microseconds for create,
   compile+initialize (0 when cached) and execute. */
static int do_execute_as(reader *r, int with_layout) {
    const uint8_t *key = r->at;
    parsed_desc d;
    call_layout l;
    if (!parse_desc(r, &d)) return reply_message(E_INVALIDARG, STAGE_PROTOCOL, "malformed descriptor");
    if (!with_layout) plain_layout(&d, &l);
    else if (!parse_layout(r, &d, &l)) return reply_message(E_INVALIDARG, STAGE_PROTOCOL, "malformed layout");
    size_t key_size = (size_t)(r->at - key);
    uint64_t in_size = get_u64(r);
    if (!r->ok || (uint64_t)(r->end - r->at) < in_size)
        return reply_message(E_INVALIDARG, STAGE_PROTOCOL, "input shorter than announced");
    const uint8_t *input = r->at;
    double create_us = 0, compile_us = 0;
    cached_op *c = find_cached(key, key_size);
    if (!c) {
        c = free_slot();
        uint32_t stage = STAGE_NONE;
        HRESULT hr = build(c, &d, &l, &stage, &create_us, &compile_us);
        if (FAILED(hr)) {
            drop(c);
            return reply(hr, stage, NULL);
        }
        c->key = malloc(key_size);
        memcpy(c->key, key, key_size);
        c->key_size = key_size;
        c->last_used = ++use_clock;
    }
    if (in_size > c->sizes[0]) in_size = c->sizes[0];
    double start = now_us();
    UINT64 out_size = c->sizes[1] + c->sizes[2], all = c->sizes[0] + out_size;
    HRESULT hr = ensure_staging(all, out_size);
    if (FAILED(hr)) return reply(hr, STAGE_EXECUTE, NULL);
    void *mapped = NULL;
    D3D12_RANGE none = {0, 0};
    hr = ID3D12Resource_Map(upload, 0, &none, &mapped);
    if (FAILED(hr)) return reply(hr, STAGE_EXECUTE, NULL);
    memset(mapped, 0, (size_t)c->sizes[0]);
    memcpy(mapped, input, (size_t)in_size);
    memset((uint8_t *)mapped + c->sizes[0], (int)(l.fill & 0xFF), (size_t)out_size); /* the outputs' guard bytes */
    ID3D12Resource_Unmap(upload, 0, NULL);
    hr = begin_commands();
    if (FAILED(hr)) return reply(hr, STAGE_EXECUTE, NULL);
    ID3D12GraphicsCommandList_CopyBufferRegion(list, c->buffers[0], 0, upload, 0, c->sizes[0]);
    transition(c->buffers[0], D3D12_RESOURCE_STATE_COPY_DEST, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
    for (int t = 1; t < 3; t++) {
        transition(c->buffers[t], D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_COPY_DEST);
        ID3D12GraphicsCommandList_CopyBufferRegion(list, c->buffers[t], 0, upload, t == 1 ? c->sizes[0]
                                                   : c->sizes[0] + c->sizes[1], c->sizes[t]);
        transition(c->buffers[t], D3D12_RESOURCE_STATE_COPY_DEST, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
    }
    record(c->compiled, c->table, c->heap);
    if (c->flags & DMLW_EXECUTION_FLAG_DESCRIPTORS_VOLATILE) bind_tensors(c); /* bound again after recording */
    uav_barrier();
    transition(c->buffers[0], D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_COPY_DEST);
    for (int t = 1; t < 3; t++)
        transition(c->buffers[t], D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_COPY_SOURCE);
    ID3D12GraphicsCommandList_CopyBufferRegion(list, readback, 0, c->buffers[1], 0, c->sizes[1]);
    ID3D12GraphicsCommandList_CopyBufferRegion(list, readback, c->sizes[1], c->buffers[2], 0, c->sizes[2]);
    for (int t = 1; t < 3; t++)
        transition(c->buffers[t], D3D12_RESOURCE_STATE_COPY_SOURCE, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
    hr = submit_and_wait();
    if (FAILED(hr)) return reply(hr, STAGE_EXECUTE, NULL);
    D3D12_RANGE whole = {0, (SIZE_T)out_size};
    hr = ID3D12Resource_Map(readback, 0, &whole, &mapped);
    if (FAILED(hr)) return reply(hr, STAGE_READBACK, NULL);
    bytes b = {0};
    put_u64(&b, c->sizes[1]);
    put(&b, mapped, (size_t)c->sizes[1]);
    put_u64(&b, c->sizes[2]);
    put(&b, (uint8_t *)mapped + c->sizes[1], (size_t)c->sizes[2]);
    ID3D12Resource_Unmap(readback, 0, &none);
    put_f64(&b, create_us);
    put_f64(&b, compile_us);
    put_f64(&b, now_us() - start);
    int ok = reply(S_OK, STAGE_NONE, &b);
    free(b.data);
    return ok;
}

static int do_execute(reader *r) { return do_execute_as(r, 0); }

/* CREATE: descriptor. Reply: the HRESULT of CreateOperator; payload f64 microseconds. */
static int do_create(reader *r) {
    parsed_desc d;
    if (!parse_desc(r, &d)) return reply_message(E_INVALIDARG, STAGE_PROTOCOL, "malformed descriptor");
    void *op = NULL;
    double start = now_us();
    HRESULT hr = ((fn_create_operator)VT(dml)[SLOT_DEVICE_CREATE_OPERATOR])(dml, &d.op, &IID_DMLOperator, &op);
    double took = now_us() - start;
    release(op);
    bytes b = {0};
    put_f64(&b, took);
    int ok = reply(hr, STAGE_CREATE, &b);
    free(b.data);
    return ok;
}

/* ---- corpus cases (--replay DIR) ---------------------------------------------------------
 *
 * `topk_worker --dll ... --replay DIR` runs every DIR\*.json case that `topkspec corpus` wrote
 * (see topkspec/corpus/dml_files.py for the format) through this device, prints one line per
 * case and a summary on standard output, and exits 0 when every verdict is as stored, 1 when
 * one is not. A C or C++ harness of your own can copy this part: read the JSON, fill the
 * DML_*_OPERATOR_DESC from "descriptor", upload "input", and compare the outputs with
 * "expected" byte for byte, or expect CreateOperator to fail for "outcome": "refused". */

typedef struct json json;
struct json {
    char type; /* 'o' object, 'a' array, 's' string, 'n' number, 't' true, 'f' false, 'z' null */
    char *text; /* a string's contents, a number's digits */
    json **items; /* an array's values, an object's values */
    char **keys; /* an object's keys */
    size_t count;
};

typedef struct {
    const char *at;
    int ok;
} json_reader;

static void json_space(json_reader *p) {
    while (*p->at == ' ' || *p->at == '\n' || *p->at == '\r' || *p->at == '\t') p->at++;
}

static char *json_string_text(json_reader *p) {
    /* The corpus writes ASCII strings; escapes other than \" and \\ are kept as written. */
    bytes b = {0};
    p->at++; /* the opening quote */
    while (*p->at && *p->at != '"') {
        if (*p->at == '\\' && p->at[1]) p->at++;
        put(&b, p->at++, 1);
    }
    if (*p->at != '"') p->ok = 0; else p->at++;
    put(&b, "", 1);
    return (char *)b.data;
}

static json *json_value(json_reader *p, int depth);

static json *json_new(char type) {
    json *j = calloc(1, sizeof *j);
    if (!j) ExitProcess(3);
    j->type = type;
    return j;
}

static void json_add(json *j, char *key, json *value) {
    j->items = realloc(j->items, (j->count + 1) * sizeof *j->items);
    j->keys = realloc(j->keys, (j->count + 1) * sizeof *j->keys);
    if (!j->items || !j->keys) ExitProcess(3);
    j->items[j->count] = value;
    j->keys[j->count] = key;
    j->count++;
}

static json *json_value(json_reader *p, int depth) {
    json_space(p);
    if (depth > 32) { p->ok = 0; return json_new('z'); }
    char c = *p->at;
    if (c == '{' || c == '[') {
        json *j = json_new(c == '{' ? 'o' : 'a');
        char close = c == '{' ? '}' : ']';
        p->at++;
        json_space(p);
        while (p->ok && *p->at && *p->at != close) {
            char *key = NULL;
            if (j->type == 'o') {
                if (*p->at != '"') { p->ok = 0; break; }
                key = json_string_text(p);
                json_space(p);
                if (*p->at != ':') { p->ok = 0; break; }
                p->at++;
            }
            json_add(j, key, json_value(p, depth + 1));
            json_space(p);
            if (*p->at == ',') p->at++;
            json_space(p);
        }
        if (*p->at != close) p->ok = 0; else p->at++;
        return j;
    }
    if (c == '"') {
        json *j = json_new('s');
        j->text = json_string_text(p);
        return j;
    }
    if (!strncmp(p->at, "true", 4)) { p->at += 4; return json_new('t'); }
    if (!strncmp(p->at, "false", 5)) { p->at += 5; return json_new('f'); }
    if (!strncmp(p->at, "null", 4)) { p->at += 4; return json_new('z'); }
    const char *start = p->at;
    while (*p->at && strchr("+-0123456789.eE", *p->at)) p->at++;
    if (p->at == start) { p->ok = 0; return json_new('z'); }
    json *j = json_new('n');
    j->text = calloc(1, (size_t)(p->at - start) + 1);
    memcpy(j->text, start, (size_t)(p->at - start));
    return j;
}

static void json_free(json *j) {
    if (!j) return;
    for (size_t i = 0; i < j->count; i++) {
        json_free(j->items[i]);
        free(j->keys[i]);
    }
    free(j->items);
    free(j->keys);
    free(j->text);
    free(j);
}

static json *json_get(const json *j, const char *key) {
    if (!j || j->type != 'o') return NULL;
    for (size_t i = 0; i < j->count; i++)
        if (!strcmp(j->keys[i], key)) return j->items[i];
    return NULL;
}

static uint64_t json_uint(const json *j) { return j && j->type == 'n' ? strtoull(j->text, NULL, 10) : 0; }

/* An enum member written as a name ("DML_TENSOR_DATA_TYPE_FLOAT32", "FLOAT32") or a number. */
static UINT json_enum(const json *j, const char *prefix, const char *const *names, UINT count) {
    if (!j) return 0;
    if (j->type == 'n') return (UINT)json_uint(j);
    if (j->type != 's') return 0xFFFFFFFFu;
    const char *name = j->text;
    if (!strncmp(name, prefix, strlen(prefix))) name += strlen(prefix);
    for (UINT i = 0; i < count; i++)
        if (names[i] && !strcmp(name, names[i])) return i;
    return 0xFFFFFFFFu;
}

static const char *const data_type_names[] = {"UNKNOWN", "FLOAT32", "FLOAT16", "UINT32", "UINT16", "UINT8", "INT32",
                                              "INT16", "INT8", "FLOAT64", "UINT64", "INT64"};
static const UINT element_sizes[] = {4, 4, 2, 4, 2, 1, 4, 2, 1, 8, 8, 8};

static int base64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

static void base64_decode(const char *text, bytes *out) {
    uint32_t acc = 0;
    int bits = 0;
    for (; text && *text; text++) {
        int v = base64_value(*text);
        if (v < 0) continue; /* padding */
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            uint8_t byte = (uint8_t)(acc >> bits);
            put(out, &byte, 1);
        }
    }
}

/* DMLCalcBufferTensorSize for packed tensors: bytes up to the last element, rounded up to 4. */
static uint64_t packed_size(UINT data_type, const json *sizes) {
    uint64_t elements = 1;
    for (size_t i = 0; i < sizes->count; i++) {
        uint64_t size = json_uint(sizes->items[i]);
        if (!size) return 0;
        elements *= size;
    }
    uint64_t element = data_type < 12 ? element_sizes[data_type] : 4;
    return (elements * element + 3) & ~(uint64_t)3;
}

/* The descriptor in the binary form parse_desc reads. */
static int encode_case_desc(const json *desc, bytes *out) {
    static const char *const op_names[] = {"TOP_K", "TOP_K1"};
    static const char *const directions[] = {"INCREASING", "DECREASING"};
    static const char *const tensor_names[] = {"InputTensor", "OutputValueTensor", "OutputIndexTensor"};
    const json *body = json_get(desc, "Desc");
    UINT op = json_enum(json_get(desc, "Type"), "DML_OPERATOR_", op_names, 2);
    if (!body || op > 1) return 0;
    uint32_t head[4] = {op ? 112u : DMLW_OPERATOR_TOP_K, /* DML_OPERATOR_TOP_K1 = 112 */ (uint32_t)json_uint(json_get(body, "Axis")),
                        (uint32_t)json_uint(json_get(body, "K")),
                        op ? json_enum(json_get(body, "AxisDirection"), "DML_AXIS_DIRECTION_", directions, 2) : 0};
    put(out, head, sizeof head);
    for (int t = 0; t < 3; t++) {
        const json *tensor = json_get(body, tensor_names[t]);
        const json *sizes = json_get(tensor, "Sizes"), *strides = json_get(tensor, "Strides");
        if (!sizes || sizes->type != 'a' || (strides && (strides->type != 'a' || strides->count != sizes->count)))
            return 0;
        UINT data_type = json_enum(json_get(tensor, "DataType"), "DML_TENSOR_DATA_TYPE_", data_type_names, 12);
        const json *total = json_get(tensor, "TotalTensorSizeInBytes");
        uint32_t fields[5] = {DMLW_TENSOR_TYPE_BUFFER, data_type, 0, (uint32_t)sizes->count, strides != NULL};
        uint64_t total_size = total ? json_uint(total) : packed_size(data_type, sizes);
        uint32_t alignment = (uint32_t)json_uint(json_get(tensor, "GuaranteedBaseOffsetAlignment"));
        put(out, fields, sizeof fields);
        put(out, &total_size, sizeof total_size);
        put(out, &alignment, sizeof alignment);
        for (size_t i = 0; i < sizes->count; i++) {
            uint32_t size = (uint32_t)json_uint(sizes->items[i]);
            put(out, &size, sizeof size);
        }
        for (size_t i = 0; strides && i < strides->count; i++) {
            uint32_t stride = (uint32_t)json_uint(strides->items[i]);
            put(out, &stride, sizeof stride);
        }
    }
    return 1;
}

/* A laid-out case's "execution" (dml_layouts.py) as EXECUTE_LAYOUT's layout fields. */
static int encode_execution(const json *execution, bytes *out) {
    static const char *const flag_names[] = {"ALLOW_HALF_PRECISION_COMPUTATION", "DISABLE_META_COMMANDS",
                                             "DESCRIPTORS_VOLATILE"};
    const json *flags = json_get(execution, "flags"), *bindings = json_get(execution, "bindings");
    if (!flags || flags->type != 'a' || !bindings || bindings->type != 'a' || bindings->count != 3) return 0;
    uint32_t head[2] = {0, json_get(execution, "graph") && json_get(execution, "graph")->type == 't'};
    for (size_t i = 0; i < flags->count; i++)
        for (UINT f = 0; f < 3; f++)
            if (flags->items[i]->type == 's' && strstr(flags->items[i]->text, flag_names[f])) head[0] |= 1u << f;
    put(out, head, sizeof head);
    for (int t = 0; t < 3; t++) {
        uint64_t offset = json_uint(json_get(bindings->items[t], "Offset"));
        uint64_t size = json_uint(json_get(bindings->items[t], "BufferBytes"));
        put_u64(out, offset);
        put_u64(out, size);
    }
    uint32_t fill = (uint32_t)json_uint(json_get(execution, "guard_byte"));
    put(out, &fill, sizeof fill);
    return 1;
}

/* A laid-out output: its elements read through its Strides from the whole buffer must be
   `want` (the logical tensor, packed), and every other byte must still be the guard byte. */
static int check_laid_out(const json *tensor, const json *binding, const uint8_t *buffer, uint64_t size,
                          const bytes *want, UINT guard, const char *name, char *why, size_t why_size) {
    const json *sizes = json_get(tensor, "Sizes"), *strides = json_get(tensor, "Strides");
    UINT data_type = json_enum(json_get(tensor, "DataType"), "DML_TENSOR_DATA_TYPE_", data_type_names, 12);
    uint64_t element = data_type < 12 ? element_sizes[data_type] : 4, offset = json_uint(json_get(binding, "Offset"));
    uint64_t step[MAX_DIMS], index[MAX_DIMS], count = 1;
    size_t rank = sizes->count;
    for (size_t d = rank; d-- > 0;) {
        step[d] = strides ? json_uint(strides->items[d]) : count;
        count *= json_uint(sizes->items[d]);
        index[d] = 0;
    }
    uint8_t *inside = calloc((size_t)size + 1, 1);
    int broken = 0;
    for (uint64_t i = 0; i < count && !broken; i++) {
        uint64_t at = offset;
        for (size_t d = 0; d < rank; d++) at += index[d] * step[d] * element;
        if (at + element > size || (i + 1) * element > want->size) {
            snprintf(why, why_size, "%s element %llu lies outside its buffer", name, (unsigned long long)i);
            broken = 1;
        } else if (memcmp(buffer + at, want->data + i * element, (size_t)element)) {
            snprintf(why, why_size, "%s differ at element %llu", name, (unsigned long long)i);
            broken = 1;
        } else {
            memset(inside + at, 1, (size_t)element);
        }
        for (size_t d = rank; d-- > 0;) { /* the next logical element, row-major */
            if (++index[d] < json_uint(sizes->items[d])) break;
            index[d] = 0;
        }
    }
    for (uint64_t b = 0; b < size && !broken; b++)
        if (!inside[b] && buffer[b] != (uint8_t)guard) {
            snprintf(why, why_size, "%s: byte %llu outside the output changed (0x%02X, the guard byte 0x%02X)", name,
                     (unsigned long long)b, buffer[b], guard & 0xFF);
            broken = 1;
        }
    free(inside);
    return broken;
}

/* One case: 0 as stored, 1 not as stored, 2 not judged; `why` says what happened. */
/* "check": "nan_rule" (float32 input, where NaN leaves the result open): what holds whatever
   the NaN policy. Per sequence: each index in range and used once, each value the input's
   element at its index bit for bit, and the non-NaN values returned the top non-NaN input
   values in order. 0 when all hold, 1 (with `why`) when one breaks. */
static int compare_floats(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int check_nan_rule(const json *desc, const uint8_t *input, const uint8_t *values, const uint8_t *indices,
                          char *why, size_t why_size) {
    static const char *const directions[] = {"INCREASING", "DECREASING"};
    const json *body = json_get(desc, "Desc");
    const json *sizes = json_get(json_get(body, "InputTensor"), "Sizes");
    const json *index_type = json_get(json_get(body, "OutputIndexTensor"), "DataType");
    UINT axis = (UINT)json_uint(json_get(body, "Axis")), k = (UINT)json_uint(json_get(body, "K"));
    const json *direction = json_get(body, "AxisDirection");
    int largest = !direction || json_enum(direction, "DML_AXIS_DIRECTION_", directions, 2) == 1;
    int wide = index_type && index_type->type == 's' && strstr(index_type->text, "UINT64") != NULL;
    uint64_t outer = 1, inner = 1, n = json_uint(sizes->items[axis]);
    for (UINT d = 0; d < axis; d++) outer *= json_uint(sizes->items[d]);
    for (size_t d = axis + 1; d < sizes->count; d++) inner *= json_uint(sizes->items[d]);
    float *column = malloc(sizeof(float) * (size_t)n);
    uint8_t *used = malloc((size_t)n);
    int broken = 0;
    for (uint64_t o = 0; o < outer && !broken; o++) {
        for (uint64_t j = 0; j < inner && !broken; j++) {
            size_t numbers = 0;
            memset(used, 0, (size_t)n);
            for (uint64_t i = 0; i < n; i++) {
                float v;
                memcpy(&v, input + 4 * ((o * n + i) * inner + j), 4);
                if (v == v) column[numbers++] = v;
            }
            qsort(column, numbers, sizeof(float), compare_floats); /* ascending */
            size_t seen = 0;
            for (UINT p = 0; p < k && !broken; p++) {
                uint64_t at = (o * k + p) * inner + j, index = 0;
                if (wide) memcpy(&index, indices + 8 * at, 8); else memcpy(&index, indices + 4 * at, 4);
                float got, there;
                memcpy(&got, values + 4 * at, 4);
                if (index >= n || used[index]) {
                    snprintf(why, why_size, "sequence %llu, position %u: index %llu %s",
                             (unsigned long long)(o * inner + j), p, (unsigned long long)index,
                             index >= n ? "out of range" : "returned twice");
                    broken = 1;
                    break;
                }
                used[index] = 1;
                memcpy(&there, input + 4 * ((o * n + index) * inner + j), 4);
                if (memcmp(&got, &there, 4)) {
                    snprintf(why, why_size, "position %u: value is not the input element at index %llu", p,
                             (unsigned long long)index);
                    broken = 1;
                } else if (got == got) {
                    float want = seen < numbers ? (largest ? column[numbers - 1 - seen] : column[seen]) : got;
                    if (seen >= numbers || got != want) {
                        snprintf(why, why_size, "sequence %llu, position %u: non-NaN value %.9g returned, the "
                                 "top non-NaN value there is %.9g", (unsigned long long)(o * inner + j), p,
                                 (double)got, (double)want);
                        broken = 1;
                    }
                    seen++;
                }
            }
        }
    }
    if (!broken) snprintf(why, why_size, "the NaN rule holds");
    free(column);
    free(used);
    return broken;
}

static int replay_case(const json *entry, UINT device_level, char *why, size_t why_size) {
    const json *expected = json_get(entry, "expected");
    const json *outcome = json_get(expected, "outcome");
    bytes desc = {0}, frame = {0};
    if (!outcome || outcome->type != 's' || !encode_case_desc(json_get(entry, "descriptor"), &desc)) {
        snprintf(why, why_size, "not a corpus case this worker can read");
        free(desc.data);
        return 1;
    }
    int refused = !strcmp(outcome->text, "refused"), verdict = 1;
    if (refused) {
        const json *level_bound = json_get(expected, "level_bound");
        const json *level_name = json_get(entry, "FeatureLevel");
        UINT major = 0, minor = 0;
        if (level_name && level_name->type == 's')
            sscanf(level_name->text, "DML_FEATURE_LEVEL_%u_%u", &major, &minor);
        if (level_bound && level_bound->type == 't' && device_level > ((major << 12) | (minor << 8))) {
            snprintf(why, why_size, "invalid only below the device's feature level");
            free(desc.data);
            return 2;
        }
    }
    bytes request = {0};
    put(&request, desc.data, desc.size);
    bytes input = {0};
    const json *execution = refused ? NULL : json_get(entry, "execution");
    if (execution && !encode_execution(execution, &request)) {
        snprintf(why, why_size, "not a corpus case this worker can read");
        free(desc.data);
        free(request.data);
        return 1;
    }
    if (!refused) {
        const json *given = json_get(json_get(entry, "input"), execution ? "buffer_base64" : "base64");
        base64_decode(given ? given->text : NULL, &input);
        uint64_t in_size = input.size;
        put_u64(&request, in_size);
        if (input.size) put(&request, input.data, input.size);
    }
    reader r = {request.data, request.data + request.size, 1};
    captured = &frame;
    if (refused) do_create(&r); else do_execute_as(&r, execution != NULL);
    captured = NULL;
    uint32_t status = frame.size >= 12 ? *(uint32_t *)(frame.data + 4) : E_FAIL;
    if (refused) {
        verdict = FAILED(status) ? 0 : 1;
        snprintf(why, why_size, FAILED(status) ? "refused (0x%08lx)" : "accepted (0x%08lx), but it breaks its rules",
                 (unsigned long)status);
    } else if (FAILED(status)) {
        snprintf(why, why_size, "refused a valid descriptor (0x%08lx, stage %u)", (unsigned long)status,
                 frame.size >= 12 ? *(uint32_t *)(frame.data + 8) : 0);
    } else {
        /* payload: u64 size, values, u64 size, indices, three f64 timings */
        const uint8_t *at = frame.data + 12;
        uint64_t values_size, indices_size;
        memcpy(&values_size, at, 8);
        const uint8_t *values = at + 8;
        memcpy(&indices_size, values + values_size, 8);
        const uint8_t *indices = values + values_size + 8;
        const json *check = json_get(expected, "check");
        if (check && check->type == 's' && !strcmp(check->text, "nan_rule")) {
            verdict = check_nan_rule(json_get(entry, "descriptor"), input.data, values, indices, why, why_size);
            goto done;
        }
        bytes want_values = {0}, want_indices = {0};
        const json *want = expected;
        base64_decode(json_get(json_get(want, "OutputValueTensor"), "base64")->text, &want_values);
        base64_decode(json_get(json_get(want, "OutputIndexTensor"), "base64")->text, &want_indices);
        if (execution) { /* whole buffers: read through the Strides, the guard bytes kept */
            const json *body = json_get(json_get(entry, "descriptor"), "Desc"), *bindings = json_get(execution, "bindings");
            UINT guard = (UINT)json_uint(json_get(execution, "guard_byte"));
            verdict = check_laid_out(json_get(body, "OutputValueTensor"), bindings->items[1], values, values_size,
                                     &want_values, guard, "values", why, why_size) ||
                      check_laid_out(json_get(body, "OutputIndexTensor"), bindings->items[2], indices, indices_size,
                                     &want_indices, guard, "indices", why, why_size);
            if (!verdict) snprintf(why, why_size, "exact, guard bytes kept");
            free(want_values.data);
            free(want_indices.data);
            goto done;
        }
        int values_ok = want_values.size <= values_size && !memcmp(values, want_values.data, want_values.size);
        int indices_ok = want_indices.size <= indices_size && !memcmp(indices, want_indices.data, want_indices.size);
        verdict = values_ok && indices_ok ? 0 : 1;
        snprintf(why, why_size, verdict ? "%s differ" : "exact", !values_ok ? "values" : "indices");
        free(want_values.data);
        free(want_indices.data);
    }
done:
    free(desc.data);
    free(request.data);
    free(input.data);
    free(frame.data);
    return verdict;
}

static int replay_folder(const char *folder, UINT device_level) {
    char pattern[MAX_PATH * 2];
    snprintf(pattern, sizeof pattern, "%s\\*.json", folder);
    WIN32_FIND_DATAA found;
    HANDLE search = FindFirstFileA(pattern, &found);
    if (search == INVALID_HANDLE_VALUE) {
        printf("no .json cases in %s\n", folder);
        return 2;
    }
    unsigned counts[3] = {0, 0, 0};
    static const char *const words[] = {"as stored", "NOT AS STORED", "not judged"};
    do {
        char path[MAX_PATH * 3], why[160];
        snprintf(path, sizeof path, "%s\\%s", folder, found.cFileName);
        FILE *file = fopen(path, "rb");
        bytes text = {0};
        char chunk[65536];
        size_t got;
        while (file && (got = fread(chunk, 1, sizeof chunk, file)) > 0) put(&text, chunk, got);
        if (file) fclose(file);
        put(&text, "", 1);
        json_reader p = {(const char *)text.data, 1};
        json *entry = json_value(&p, 0);
        int verdict = p.ok ? replay_case(entry, device_level, why, sizeof why) : 1;
        if (!p.ok) snprintf(why, sizeof why, "not JSON");
        counts[verdict]++;
        printf("%s %s: %s\n", words[verdict], found.cFileName, why);
        json_free(entry);
        free(text.data);
    } while (FindNextFileA(search, &found));
    FindClose(search);
    printf("%u as stored, %u not as stored, %u not judged\n", counts[0], counts[1], counts[2]);
    fflush(stdout);
    return counts[1] ? 1 : 0;
}

/* ---- start ------------------------------------------------------------------------------ */

static const UINT feature_levels[] = {0x1000, 0x2000, 0x2100, 0x3000, 0x3100, 0x4000, 0x4100, 0x5000,
                                      0x5100, 0x5200, 0x6000, 0x6100, 0x6200, 0x6300, 0x6400};

/* The highest feature level the device reports; older DirectML releases refuse levels they do
   not know, so the query is retried with fewer levels. */
static HRESULT max_feature_level(UINT *level) {
    HRESULT hr = E_FAIL;
    UINT count = sizeof feature_levels / sizeof feature_levels[0];
    for (; count > 0; count--) {
        dmlw_query_feature_levels query = {count, feature_levels};
        UINT data = 0;
        hr = ((fn_check_feature)VT(dml)[SLOT_DEVICE_CHECK_FEATURE_SUPPORT])(dml, DMLW_FEATURE_FEATURE_LEVELS,
                                                                           sizeof query, &query, sizeof data, &data);
        if (SUCCEEDED(hr)) {
            *level = data;
            return hr;
        }
    }
    return hr;
}

static int handle_request(uint32_t command, reader *r) {
    switch (command) {
    case CMD_CREATE: return do_create(r);
    case CMD_EXECUTE: return do_execute(r);
    case CMD_EXECUTE_LAYOUT: return do_execute_as(r, 1);
    default: return -1;
    }
}

int main(int argc, char **argv) {
    const char *dll = "DirectML.dll", *adapter = "auto";
    UINT min_level = 0x1000;
    int lanes = 0, metacommands = 0;
    const char *replay_dir = NULL; /* --replay DIR: run the corpus cases there, print verdicts */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dll") && i + 1 < argc) dll = argv[++i];
        else if (!strcmp(argv[i], "--adapter") && i + 1 < argc) adapter = argv[++i];
        else if (!strcmp(argv[i], "--min-level") && i + 1 < argc) min_level = (UINT)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--lane-workaround")) lanes = 1;
        else if (!strcmp(argv[i], "--metacommand-workaround")) metacommands = 1;
        else if (!strcmp(argv[i], "--replay") && i + 1 < argc) replay_dir = argv[++i];
    }
    trace = getenv("TOPK_WORKER_TRACE") != NULL;
    io_start("topk_worker");

    bytes info = {0}, listing = {0};
    adapter_info chosen;
    memset(&chosen, 0, sizeof chosen);
    HRESULT hr = S_OK;
    const char *failed = "";
    double start = now_us(), d3d_ms = 0, dml_ms = 0;
    int patched = 0;
    UINT level = 0;

    WCHAR wide_dll[MAX_PATH * 2];
    MultiByteToWideChar(CP_UTF8, 0, dll, -1, wide_dll, MAX_PATH * 2);
    dml_module = LoadLibraryExW(wide_dll, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
    if (!dml_module) {
        hr = HRESULT_FROM_WIN32(GetLastError());
        failed = "LoadLibrary(DirectML.dll)";
    }
    if (SUCCEEDED(hr)) {
        hr = create_d3d_device(adapter, &chosen, &listing);
        d3d_ms = (now_us() - start) / 1000;
        if (FAILED(hr)) failed = "D3D12CreateDevice";
    } else {
        put_text(&listing, "[]");
    }
    if (SUCCEEDED(hr)) {
        if (lanes) patched = apply_lane_workaround(d3d);
        if (metacommands) apply_metacommand_workaround(d3d);
        start = now_us();
        fn_dml_create_device1 create1 = (fn_dml_create_device1)(void *)GetProcAddress(dml_module, "DMLCreateDevice1");
        if (create1) {
            hr = create1(d3d, 0, min_level, &IID_DMLDevice, &dml);
        } else {
            fn_dml_create_device create0 = (fn_dml_create_device)(void *)GetProcAddress(dml_module, "DMLCreateDevice");
            hr = create0 ? create0(d3d, 0, &IID_DMLDevice, &dml) : HRESULT_FROM_WIN32(ERROR_PROC_NOT_FOUND);
        }
        dml_ms = (now_us() - start) / 1000;
        if (FAILED(hr)) failed = "DMLCreateDevice1";
    }
    if (SUCCEEDED(hr)) {
        hr = create_queue();
        if (FAILED(hr)) failed = "command queue";
    }
    char number[96];
    put_text(&info, "{\"protocol\": ");
    snprintf(number, sizeof number, "%d", WORKER_PROTOCOL);
    put_text(&info, number);
    put_text(&info, ", \"failed\": ");
    put_json_string(&info, failed);
    put_text(&info, ", \"adapter\": ");
    put_json_string(&info, chosen.adapter);
    snprintf(number, sizeof number, ", \"vendor_id\": %u, \"device_id\": %u, \"software\": %s", chosen.vendor,
             chosen.device_id, chosen.software ? "true" : "false");
    put_text(&info, number);
    snprintf(number, sizeof number, ", \"dedicated_video_memory\": %llu", (unsigned long long)chosen.memory);
    put_text(&info, number);
    put_text(&info, ", \"adapters\": ");
    put(&info, listing.data, listing.size);
    snprintf(number, sizeof number, ", \"d3d12_ms\": %.3f, \"dml_ms\": %.3f, \"lane_workaround\": %s", d3d_ms, dml_ms,
             patched ? "true" : "false");
    put_text(&info, number);
    if (SUCCEEDED(hr)) {
        HRESULT level_hr = max_feature_level(&level);
        snprintf(number, sizeof number, ", \"feature_level\": %u, \"feature_level_hr\": %lu", level,
                 (unsigned long)(uint32_t)level_hr);
        put_text(&info, number);
        put_text(&info, ", \"types\": {");
        for (UINT type = 1; type <= 11; type++) {
            UINT query = type, supported = 0;
            HRESULT type_hr = ((fn_check_feature)VT(dml)[SLOT_DEVICE_CHECK_FEATURE_SUPPORT])(
                dml, DMLW_FEATURE_TENSOR_DATA_TYPE_SUPPORT, sizeof query, &query, sizeof supported, &supported);
            snprintf(number, sizeof number, "%s\"%u\": [%s, %lu]", type > 1 ? ", " : "", type,
                     supported ? "true" : "false", (unsigned long)(uint32_t)type_hr);
            put_text(&info, number);
        }
        put_text(&info, "}");
    }
    put_text(&info, "}");
    if (replay_dir) {
        if (FAILED(hr)) {
            printf("no device: %s failed (0x%08lx)\n", failed, (unsigned long)(uint32_t)hr);
            return 2;
        }
        /* Which device answered: on a machine with several Vulkan drivers, the verdicts are its. */
        printf("device: %s (vendor 0x%04x, device 0x%04x%s), feature level %u_%u\n", chosen.adapter, chosen.vendor,
               chosen.device_id, chosen.software ? ", software" : "", level >> 12, (level >> 8) & 0xF);
        return replay_folder(replay_dir, level);
    }
    if (!reply(hr, STAGE_DEVICE, &info)) return 2;
    free(info.data);
    free(listing.data);
    if (FAILED(hr)) return 1;

    return serve(handle_request);
}
