// What the boundary needs to know of a tensor argument, read in one call.
//
// tch reads each fact of a tensor with its own FFI call (device, dtype, rank, layout,
// contiguity, sizes, data pointer), each followed by an error check through thread-local
// storage, and unpacks the Python object into a new heap-allocated `at::Tensor`. On a
// small call with three tensors that was about a third of the cost above the floor of any
// Python call (docs/benchmarks.md). This reads every fact at once, from the `at::Tensor`
// inside the Python object, and hands out its address: the Rust side borrows it for the
// call (`rextio_runtime::dense::F32::borrowed_argument`).
//
// Only exact `torch.Tensor` and `torch.nn.Parameter` objects are read here; anything else
// (subclasses, whose `isinstance` may run Python code, and non-tensors) reports
// `REXTIO_ARG_OTHER` and takes the general path, which also words every error.

#include <cstdint>

#include <torch/csrc/autograd/python_variable.h>

extern "C" {

enum {
  REXTIO_ARG_OK = 0,
  REXTIO_ARG_OTHER = 1,
};

struct RextioArgInfo {
  void* tensor;          // the `at::Tensor` inside the Python object
  const void* data;      // its data pointer; null unless a strided CPU tensor with storage
  int64_t sizes[2];      // the first two sizes, when rank <= 2
  int32_t scalar_type;   // c10::ScalarType
  int32_t device_type;   // c10::DeviceType
  int32_t device_index;  // -1 when none
  int32_t layout;        // c10::Layout
  int32_t rank;
  uint8_t contiguous;
  uint8_t plain;         // no negative or conjugate bit, only a dense CPU tensor's dispatch keys
};

int rextio_arg_info(PyObject* obj, RextioArgInfo* out) {
  try {
    if (!THPVariable_CheckExact(obj)) {
      return REXTIO_ARG_OTHER;
    }
    const at::Tensor& t = THPVariable_Unpack(obj);
    if (!t.defined()) {
      return REXTIO_ARG_OTHER;
    }
    out->tensor = const_cast<at::Tensor*>(&t);
    const c10::Device device = t.device();
    out->device_type = static_cast<int32_t>(device.type());
    out->device_index = device.index();
    out->scalar_type = static_cast<int32_t>(t.scalar_type());
    out->layout = static_cast<int32_t>(t.layout());
    const int64_t rank = t.dim();
    out->rank = static_cast<int32_t>(rank);
    // No wrapper: a nested tensor or one of functorch's, functionalization's or Python's
    // (fake, subclass-dispatching) tensors has its own dispatch key, and its data pointer is
    // not its values. (Subtracting a dense CPU tensor's key set from the tensor's left
    // per-backend bits behind and refused every tensor: 0.5 us more per call.)
    static const c10::DispatchKeySet wrapper_keys({
        c10::DispatchKey::Python,
        c10::DispatchKey::PythonTLSSnapshot,
        c10::DispatchKey::Functionalize,
        c10::DispatchKey::FuncTorchBatched,
        c10::DispatchKey::FuncTorchGradWrapper,
        c10::DispatchKey::FuncTorchDynamicLayerFrontMode,
        c10::DispatchKey::FuncTorchDynamicLayerBackMode,
    });
    out->plain = !t.is_neg() && !t.is_conj() && t.has_storage() && !t.is_nested() &&
                 !t.key_set().has_any(wrapper_keys);
    out->contiguous = 0;
    out->data = nullptr;
    out->sizes[0] = out->sizes[1] = 0;
    if (out->layout == static_cast<int32_t>(c10::kStrided) && device.is_cpu() &&
        out->plain) {
      out->contiguous = t.is_contiguous();
      if (rank <= 2) {
        for (int64_t i = 0; i < rank; ++i) {
          out->sizes[i] = t.size(i);
        }
      }
      out->data = t.const_data_ptr();
    }
    return REXTIO_ARG_OK;
  } catch (...) {
    return REXTIO_ARG_OTHER;
  }
}

}  // extern "C"
