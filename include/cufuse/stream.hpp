// cufuse/stream.hpp: devices, streams and events, and the current device and stream of
// each thread. Evaluation launches on the current stream of the current device.
// Nothing here touches the GPU until it is used, so a program can build these objects on
// a machine with no GPU; using one there throws NoDeviceError.
#pragma once
#include <memory>
#include <string>

namespace cufuse {

class Device {
 public:
  Device();  // this thread's current device
  explicit Device(int id);
  int id() const { return id_; }
  // Number of CUDA devices; 0 where there is no GPU or no driver (never throws).
  static int count();
  static bool available() { return count() > 0; }
  // Why there is no device, in words ("" when there is one).
  static std::string unavailable_reason();
  static Device current();
  void use() const;          // makes this the thread's current device
  void synchronize() const;  // waits for all work on the device
  std::string name() const;
  int compute_capability() const;  // 90 for sm_90
  int multiprocessor_count() const;

 private:
  int id_;
};

// Makes a device current for a scope.
class DeviceScope {
 public:
  explicit DeviceScope(const Device& d);
  explicit DeviceScope(int id) : DeviceScope(Device(id)) {}
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int prev_;
};

class Event;

class Stream {
 public:
  Stream();  // a new non-blocking stream on the current device (created at first use)
  static Stream null();     // the device's legacy default stream
  static Stream current();  // this thread's current stream (the null stream unless scoped)
  void synchronize() const;
  void wait(const Event& e) const;  // later work on this stream waits for e
  bool query() const;               // true when all work is done
  void* native() const;             // the cudaStream_t
  int device() const;
  bool operator==(const Stream& o) const { return native() == o.native(); }
  struct Impl;

 private:
  explicit Stream(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
  friend class StreamScope;
};

// Makes a stream current for this thread for a scope (RAII). Each device has its own
// current stream; a stream of another device also makes that device current for the scope.
class StreamScope {
 public:
  explicit StreamScope(const Stream& s);
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  std::shared_ptr<Stream::Impl> prev_;
  int device_ = 0;        // the device whose current stream this scope set
  int prev_device_ = -1;  // the device to make current again at exit (-1: unchanged)
};

class Event {
 public:
  explicit Event(bool timing = true);  // created at first use
  void record(const Stream& s = Stream::current());
  void synchronize() const;
  bool query() const;
  void* native() const;  // the cudaEvent_t
  // Milliseconds between two recorded events (both synchronized first).
  static float elapsed_ms(const Event& start, const Event& end);
  struct Impl;

 private:
  void* native_if_recorded() const;  // nullptr until record() has run
  std::shared_ptr<Impl> impl_;
  friend class Stream;
};

// Waits for all work on the current device.
void synchronize();

}  // namespace cufuse
