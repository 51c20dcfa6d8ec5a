#if canImport(FoundationEssentials)
  import Glibc
#else
  import Foundation
#endif

/// A POSIX thread running `body`, which it keeps until it returns; nil when the thread could not
/// start (`body` is then let go, never run). The server's long-lived workers (`WriteQueue`,
/// `Checkpointer`) run on such threads rather than on Foundation's, so that their ends can be
/// joined.
func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
  final class Body: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }
  var thread = pthread_t()
  let context = Unmanaged.passRetained(Body(body)).toOpaque()
  let started = pthread_create(
    &thread, nil,
    { context in
      Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
      return nil
    }, context)
  guard started == 0 else {
    Unmanaged<Body>.fromOpaque(context).release()
    return nil
  }
  return thread
}
