/* An empty libtorch_global_deps.so.
 *
 * Upstream's torch/__init__.py dlopens torch/lib/libtorch_global_deps.so (RTLD_GLOBAL) before it
 * imports torch._C; in upstream's wheel that library pulls in the CUDA runtime. torchnative has
 * no global native dependencies, so the library it ships is empty: loading it succeeds and, since
 * no libcudart gets mapped, torch skips its CUDA preloading. */
int torchnative_global_deps_marker = 1;
