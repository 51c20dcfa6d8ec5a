import CSodium

#if canImport(Glibc)
  import Glibc
#endif

/// Passwords, hashed by libsodium's `crypto_pwhash_str` (Argon2id, memory-hard) and checked by
/// `crypto_pwhash_str_verify`: the hash is a self-describing string (`$argon2id$v=19$m=…`) with
/// its own random salt and costs. Never our own code: only the calls are ours.
///
/// One hash costs libsodium's "interactive" limits: 64 MiB of memory and 2 passes. So that many
/// logins at once cannot take the memory of the host, at most `concurrentHashes` run at a time;
/// the others wait their turn.
public enum Password {
  /// libsodium's interactive limits (the hash of a login a person waits for).
  static let operations = UInt64(crypto_pwhash_opslimit_interactive())
  static let memory = Int(crypto_pwhash_memlimit_interactive())
  /// Longest password taken, in bytes: longer is refused before any work (a hash's cost does
  /// not depend on it, but a body of megabytes need not be read into one).
  public static let maximumBytes = 1024

  /// How many hashes run at once: one per processor (each holds 64 MiB while it runs).
  public static let concurrentHashes = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

  /// The Argon2id hash string of `password`, salted; nil when libsodium could not (out of memory).
  public static func hash(_ password: String) -> String? {
    ready()
    return gate.run {
      var output = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
      // NUL-terminated, so never empty; the length says where the password ends.
      let bytes = Array(password.utf8CString)
      let status = crypto_pwhash_str(
        &output, bytes, UInt64(bytes.count - 1), operations, memory)
      guard status == 0 else { return nil }
      return String(cString: output)
    }
  }

  /// True when `password` is the one `hash` was made from. A hash that is not Argon2id's
  /// string (`dummy` included, whose password nobody knows) is simply false.
  public static func verify(_ password: String, against hash: String) -> Bool {
    ready()
    return gate.run {
      let bytes = Array(password.utf8CString)
      return crypto_pwhash_str_verify(hash, bytes, UInt64(bytes.count - 1)) == 0
    }
  }

  /// A hash of a random password made with the same costs, which a login for a name nobody
  /// has is checked against: it costs what a real check costs, and never matches.
  public static let dummy =
    "$argon2id$v=19$m=65536,t=2,p=1$uyCEV74K3VYwT68ZV+IuTQ$pYkiM8Ch5iWejc6JXa6FhB0AmZcT7r8vjHea1wGPP9M"

  private static let initialized: Bool = sodium_init() >= 0

  private static func ready() {
    precondition(initialized, "libsodium could not start")
  }

  private static let gate = Gate(concurrentHashes)

  /// A counting semaphore: `run` waits while `limit` bodies run.
  /// Unchecked: a pthread mutex with a condition variable, which Synchronization does not have.
  final class Gate: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var running = 0
    private let limit: Int

    init(_ limit: Int) {
      self.limit = limit
      pthread_mutex_init(&mutex, nil)
      pthread_cond_init(&condition, nil)
    }

    func run<T>(_ body: () -> T) -> T {
      pthread_mutex_lock(&mutex)
      while running >= limit { pthread_cond_wait(&condition, &mutex) }
      running += 1
      pthread_mutex_unlock(&mutex)
      defer {
        pthread_mutex_lock(&mutex)
        running -= 1
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
      }
      return body()
    }
  }
}
