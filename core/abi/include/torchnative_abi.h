/* torchnative backend ABI, version 1.0: the C view of core/abi/src/lib.rs (same layout).
 *
 * A backend receives a `const TnRegistrar *` (the pointer of a PyCapsule named
 * TN_REGISTRAR_CAPSULE_NAME), checks tn_abi_compatible(reg->abi_version, TN_ABI_VERSION) and
 * reg->struct_size, then registers one TnAllocator per device key and TnKernelFn kernels per
 * (operator overload, device key). docs/plugins.md explains the contract; the Rust crate's doc
 * comments are the reference for each field. */
#ifndef TORCHNATIVE_ABI_H
#define TORCHNATIVE_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TN_ABI_VERSION_MAJOR 1u
#define TN_ABI_VERSION_MINOR 1u
#define TN_ABI_VERSION ((TN_ABI_VERSION_MAJOR << 16) | TN_ABI_VERSION_MINOR)
#define TN_REGISTRAR_CAPSULE_NAME "torchnative.registrar"

static inline int tn_abi_compatible(uint32_t core_version, uint32_t backend_version) {
    return (core_version >> 16) == (backend_version >> 16);
}

/* Scalar types, numbered as upstream's c10::ScalarType. */
typedef enum TnDtype {
    TN_UINT8 = 0, TN_INT8 = 1, TN_INT16 = 2, TN_INT32 = 3, TN_INT64 = 4, TN_FLOAT16 = 5,
    TN_FLOAT32 = 6, TN_FLOAT64 = 7, TN_COMPLEX_HALF = 8, TN_COMPLEX_FLOAT = 9,
    TN_COMPLEX_DOUBLE = 10, TN_BOOL = 11, TN_BFLOAT16 = 15
} TnDtype;

/* A strided view: `data` points at element 0 (storage offset applied); sizes and strides in
 * elements. Borrowed for the duration of one call. */
typedef struct TnTensor {
    void *data;
    int32_t dtype; /* a TnDtype */
    int32_t ndim;
    const int64_t *sizes;
    const int64_t *strides;
    int32_t device_index;
} TnTensor;

typedef enum TnArgKind {
    TN_ARG_NONE = 0, TN_ARG_TENSOR = 1, TN_ARG_INT = 2, TN_ARG_FLOAT = 3, TN_ARG_BOOL = 4,
    TN_ARG_INT_LIST = 5,    /* ints / len */
    TN_ARG_TENSOR_LIST = 6, /* tensors / len; a None entry of Tensor?[] has ndim == -1 */
    TN_ARG_STR = 7,         /* str_ */
    TN_ARG_DTYPE = 8,       /* a dtype code in i */
    TN_ARG_COMPLEX = 9,     /* f and f_imag */
    TN_ARG_FLOAT_LIST = 10  /* floats / len */
} TnArgKind;

/* One argument of an operator call, in schema order. Unused fields are zero. */
typedef struct TnArg {
    int32_t kind; /* a TnArgKind */
    TnTensor tensor;
    int64_t i;
    double f;
    double f_imag;
    const int64_t *ints;
    const double *floats;
    const TnTensor *tensors;
    size_t len;
    const char *str_;
} TnArg;

/* The Python exception a failing kernel asks the core to raise. */
typedef enum TnErrorKind {
    TN_ERR_RUNTIME = 0, TN_ERR_VALUE = 1, TN_ERR_TYPE = 2, TN_ERR_INDEX = 3,
    TN_ERR_NOT_IMPLEMENTED = 4
} TnErrorKind;

/* The error slot: write NUL-terminated UTF-8 into `message` (capacity bytes, owned by the core). */
typedef struct TnError {
    int32_t kind; /* a TnErrorKind */
    char *message;
    size_t capacity;
} TnError;

/* Services for a running kernel: allocate an output the meta step left unallocated. */
typedef struct TnKernelCtx {
    uint32_t struct_size;
    void *core;
    int32_t (*alloc_output)(void *core, size_t index, int32_t dtype, int32_t ndim,
                            const int64_t *sizes, TnTensor *out);
} TnKernelCtx;

/* A kernel: args in schema order, outs allocated by the core. 0 on success; otherwise fill err
 * and return non-zero. Must not unwind (no C++ exceptions, no Rust panics) across this call. */
typedef int32_t (*TnKernelFn)(void *user, const TnKernelCtx *ctx, const TnArg *args, size_t nargs,
                              TnTensor *outs, size_t nouts, TnError *err);

/* The memory of one device key. The core copies the struct. */
typedef struct TnAllocator {
    uint32_t struct_size;
    void *user;
    void *(*alloc)(void *user, size_t nbytes, size_t align); /* NULL on failure */
    void (*free)(void *user, void *ptr, size_t nbytes, size_t align);
    int32_t (*copy_from_host)(void *user, void *dst, const void *src, size_t nbytes);
    int32_t (*copy_to_host)(void *user, void *dst, const void *src, size_t nbytes);
} TnAllocator;

/* Handed to a backend at registration; functions take `core` first. */
typedef struct TnRegistrar {
    uint32_t abi_version; /* the core's: check with tn_abi_compatible first */
    uint32_t struct_size; /* fields past the core's size are absent */
    void *core;
    const char *plugin; /* the plugin name this registrar was issued to */
    /* op: an overload as in upstream's schema ("aten::add.Tensor"); 0 on success */
    int32_t (*register_kernel)(void *core, const char *op, const char *device, TnKernelFn kernel,
                               void *user);
    int32_t (*register_allocator)(void *core, const char *device, const TnAllocator *alloc);
    /* ABI 1.1, present when struct_size covers it: the allocator of one device index
       ("mydev:1"); register_allocator is index 0. 4 for a negative index. */
    int32_t (*register_allocator_at)(void *core, const char *device, int32_t index,
                                     const TnAllocator *alloc);
} TnRegistrar;

#ifdef __cplusplus
}
#endif

#endif /* TORCHNATIVE_ABI_H */
