// An NVTX injection library for the tests: with NVTX_INJECTION64_PATH naming it, every range a
// process pushes is appended to the file named by STREAMLAB_NVTX_LOG, one per line ("push NAME",
// "pop"). It checks that streamlab's ranges reach NVTX tools, without Nsight.
#include <cstdio>
#include <cstdlib>

#include <nvtx3/nvToolsExt.h>

namespace {

std::FILE* log_file() {
  static std::FILE* f = std::fopen(
      std::getenv("STREAMLAB_NVTX_LOG") ? std::getenv("STREAMLAB_NVTX_LOG") : "/dev/null", "a");
  return f;
}

int NVTX_API push(const char* message) {
  std::fprintf(log_file(), "push %s\n", message);
  return 0;
}

int NVTX_API pop() {
  std::fprintf(log_file(), "pop\n");
  return 0;
}

}  // namespace

extern "C" NVTX_DYNAMIC_EXPORT int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (!callbacks || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size))
    return 0;
  if (size <= NVTX_CBID_CORE_RangePop) return 0;
  *table[NVTX_CBID_CORE_RangePushA] = reinterpret_cast<NvtxFunctionPointer>(push);
  *table[NVTX_CBID_CORE_RangePop] = reinterpret_cast<NvtxFunctionPointer>(pop);
  return 1;
}
