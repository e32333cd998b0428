// src/runtime/first_use.hpp: a hook run once per process at the first use of a device (the
// first thread to ask for its current device while a device is present), with that device.
// The executor installs it at static initialization (exec/startup.hpp: the start-up warm-up,
// which sits above this layer); it must only start work, never wait for any.
#pragma once

namespace cufuse::detail {

using FirstDeviceUseHook = void (*)(int device);
void set_first_device_use_hook(FirstDeviceUseHook hook);

}  // namespace cufuse::detail
