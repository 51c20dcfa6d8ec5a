import Datastore
import ForumCrypto

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// NCMB's request signature: HMAC-SHA256 with the client key over
/// `METHOD \n HOST \n PATH \n sorted parameters`, base64. The parameters are the request's query
/// parameters as sent (still URL-encoded) with `SignatureMethod=HmacSHA256`,
/// `SignatureVersion=2`, `X-NCMB-Application-Key` and `X-NCMB-Timestamp`, sorted by name and
/// joined with `&`.
public enum NCMBSignature {
  /// How far a request's timestamp may be from the server's clock, either way: 15 minutes.
  public static let allowedSkewMilliseconds: Int64 = 15 * 60 * 1000

  /// The string a client signs.
  public static func stringToSign(
    method: String, host: String, path: String, rawQuery: String, applicationKey: String,
    timestamp: String
  ) -> String {
    String(
      decoding: bytesToSign(
        method: method, host: host, path: path, rawQuery: rawQuery,
        applicationKey: applicationKey, timestamp: timestamp), as: UTF8.self)
  }

  /// `stringToSign`'s UTF-8 bytes, made over bytes.
  static func bytesToSign(
    method: String, host: String, path: String, rawQuery: String, applicationKey: String,
    timestamp: String
  ) -> [UInt8] {
    let parameters = SortedParameters(
      rawQuery: rawQuery, applicationKey: applicationKey, timestamp: timestamp)
    var out: [UInt8] = []
    out += method.utf8
    out.append(0x0A)
    out += host.utf8
    out.append(0x0A)
    out += path.utf8
    out.append(0x0A)
    parameters.write { out += $0 }
    return out
  }

  /// The signed parameters in their order: the query's pieces between `&`s (empty ones
  /// dropped) and the four the signature adds, sorted by name in byte order (equal names keep
  /// the order they came in), as ranges of one buffer.
  struct SortedParameters {
    private let bytes: [UInt8]
    private let order: [Range<Int>]

    init(rawQuery: String, applicationKey: String, timestamp: String) {
      var bytes: [UInt8] = []
      bytes.reserveCapacity(rawQuery.utf8.count + applicationKey.utf8.count + 120)
      bytes += rawQuery.utf8
      bytes.append(0x26)
      bytes += "SignatureMethod=HmacSHA256&SignatureVersion=2&X-NCMB-Application-Key=".utf8
      bytes += applicationKey.utf8
      bytes += "&X-NCMB-Timestamp=".utf8
      bytes += timestamp.utf8
      var ranges: [Range<Int>] = []
      var start = 0
      for index in 0...bytes.count where index == bytes.count || bytes[index] == 0x26 {
        if index > start { ranges.append(start..<index) }
        start = index + 1
      }
      // Each name's length, then the names compared as bytes (`memcmp`): the generic slices'
      // comparisons were most of the signature's own work.
      let names = ranges.map { range in
        bytes[range].firstIndex(of: 0x3D).map { $0 - range.lowerBound } ?? range.count
      }
      let sorted = bytes.withUnsafeBufferPointer { buffer in
        ranges.indices.sorted { a, b in
          let (x, y) = (names[a], names[b])
          let order =
            min(x, y) == 0
            ? 0
            : memcmp(
              buffer.baseAddress! + ranges[a].lowerBound,
              buffer.baseAddress! + ranges[b].lowerBound,
              min(x, y))
          if order != 0 { return order < 0 }
          return x == y ? a < b : x < y
        }
      }
      self.bytes = bytes
      order = sorted.map { ranges[$0] }
    }

    /// Hands the parameters, joined by `&`, to `body` in pieces.
    func write(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
      bytes.withUnsafeBufferPointer { buffer in
        for (position, range) in order.enumerated() {
          if position > 0 { SortedParameters.ampersand.withUnsafeBufferPointer(body) }
          body(UnsafeBufferPointer(rebasing: buffer[range]))
        }
      }
    }

    private static let ampersand: [UInt8] = [0x26]
  }

  /// The board's keys made ready for checking requests: the client key's HMAC state is
  /// computed once, not at every request.
  struct Keys {
    let applicationKey: [UInt8]
    let mac: Crypto.HMACKey
    /// The keys as read, for `GET forum/keys`.
    let text: ApplicationKeys

    init(_ keys: ApplicationKeys) {
      text = keys
      applicationKey = Array(keys.applicationKey.utf8)
      mac = Crypto.HMACKey(keys.clientKey.utf8)
    }
  }

  /// The base64 signature of `string` under `clientKey`.
  public static func sign(_ string: String, clientKey: String) -> String {
    sign(bytes: Array(string.utf8), clientKey: clientKey)
  }

  static func sign(bytes: [UInt8], clientKey: String) -> String {
    Crypto.base64(Crypto.hmacSHA256(key: Array(clientKey.utf8), message: bytes))
  }

  /// Milliseconds since 1970 of an NCMB timestamp: `yyyy-MM-ddTHH:mm:ss[.fraction]` followed by
  /// `Z` (UTC, what the Swift and JS SDKs send) or nothing (local time, what the Python SDK's
  /// `datetime.now().isoformat()` sends; read in the server's time zone). Nil when malformed.
  public static func milliseconds(ofTimestamp text: String) -> Int64? {
    var bytes = Array(text.utf8)
    var utc = false
    if bytes.last == UInt8(ascii: "Z") {
      utc = true
      bytes.removeLast()
    }
    guard let (year, month, day, hour, minute, second, millis) = NCMBDate.fields(bytes)
    else { return nil }
    var parts = tm()
    parts.tm_year = Int32(year - 1900)
    parts.tm_mon = Int32(month - 1)
    parts.tm_mday = Int32(day)
    parts.tm_hour = Int32(hour)
    parts.tm_min = Int32(minute)
    parts.tm_sec = Int32(second)
    parts.tm_isdst = -1
    let seconds = utc ? timegm(&parts) : mktime(&parts)
    guard seconds != -1 else { return nil }
    return Int64(seconds) * 1000 + millis
  }

  /// Checks a request's signature headers against the board's keys at time `now`: a missing
  /// header, a malformed or stale timestamp, or a signature that matches neither the host as
  /// sent nor the host without its port is `E401001` saying which; an application key that is
  /// not the board's is `E404005`.
  static func verify(_ request: HTTPRequest, keys: ApplicationKeys, now: Int64) throws {
    try verify(request, keys: Keys(keys), now: now)
  }

  /// The offsets, in minutes, a timestamp ending in `Z` may be off besides the skew: whole
  /// hours up to 14 either way, and the half- and quarter-hour zones of India, Nepal, Iran,
  /// Afghanistan, Myanmar, central Australia, Lord Howe, Chatham, Newfoundland and the
  /// Marquesas with their own sign. The iOS Objective-C SDK writes the device's local time
  /// with a literal `Z` (a device in Tokyo reads 9 hours ahead), and the Android SDK writes the
  /// hour on a 12-hour clock (`hh`: after noon UTC 12 hours early, at midnight 12 late). NCMB
  /// accepted both. The client key that signs is in every copy of an app, so the window
  /// guards little.
  static let zoneOffsetMinutes: [Int64] =
    Array(-14...14).map { Int64($0) * 60 }
    + [-570, -210, -150, 210, 270, 330, 345, 390, 525, 570, 630, 765, 825]
  static let minute: Int64 = 60 * 1000

  /// Whether `timestamp` (as sent; percent-encoded as the Android and Unity SDKs send it, or
  /// not) is within the skew of `now`, or, ending in `Z`, of `now` plus one of
  /// `zoneOffsetMinutes`.
  static func isFresh(_ timestamp: String, now: Int64) -> Bool {
    guard
      let text = timestamp.utf8.contains(UInt8(ascii: "%"))
        ? try? NCMBQuery.decode(timestamp, field: "X-NCMB-Timestamp", plusIsSpace: false)
        : timestamp,
      let time = milliseconds(ofTimestamp: text)
    else { return false }
    let off = time - now
    guard text.utf8.last == UInt8(ascii: "Z") else { return abs(off) <= allowedSkewMilliseconds }
    return zoneOffsetMinutes.contains { abs(off - $0 * minute) <= allowedSkewMilliseconds }
  }

  /// The three signature headers, or `E401001` naming the one missing: checked before
  /// anything of the database is borrowed.
  static func headers(_ request: HTTPRequest) throws -> (
    applicationKey: String, timestamp: String, signature: String
  ) {
    guard let applicationKey = request.header(lowercased: "x-ncmb-application-key") else {
      throw NCMBError.missingHeader("X-NCMB-Application-Key")
    }
    guard let timestamp = request.header(lowercased: "x-ncmb-timestamp") else {
      throw NCMBError.missingHeader("X-NCMB-Timestamp")
    }
    guard let signature = request.header(lowercased: "x-ncmb-signature") else {
      throw NCMBError.missingHeader("X-NCMB-Signature")
    }
    return (applicationKey, timestamp, signature)
  }

  static func verify(_ request: HTTPRequest, keys: Keys, now: Int64) throws {
    let newline: [UInt8] = [0x0A]
    let (applicationKey, timestamp, signature) = try headers(request)
    guard Crypto.constantTimeEqual(Array(applicationKey.utf8), keys.applicationKey) else {
      throw NCMBError.noSuchApplication
    }
    guard isFresh(timestamp, now: now) else { throw NCMBError.staleTimestamp }
    let parameters = SortedParameters(
      rawQuery: request.rawQuery, applicationKey: applicationKey, timestamp: timestamp)
    let given = Array(signature.utf8)
    var digest = [UInt8](repeating: 0, count: Crypto.digestSize)
    func signs(_ host: Substring.UTF8View) -> Bool {
      var message = keys.mac.message()
      message.update(request.method.utf8)
      message.update(newline)
      message.update(host)
      message.update(newline)
      message.update(request.path.utf8)
      message.update(newline)
      parameters.write { message.update($0) }
      digest.withUnsafeMutableBufferPointer { message.finish(into: $0) }
      // Compared as sent, in base64: two texts can decode to the same bytes.
      return Crypto.constantTimeEqual(Crypto.base64Bytes(digest), given)
    }
    for name in ["host", "x-forwarded-host"] {
      guard let value = request.header(lowercased: name) else { continue }
      // The first of a list; byte offsets, as a host is ASCII (anything else never matches).
      let whole = Substring(value)
      let host = whole.utf8.prefix { $0 != UInt8(ascii: ",") }
      if signs(host) { return }
      // The Swift and JS SDKs sign the host without the port the URL names.
      if let colon = host.lastIndex(of: UInt8(ascii: ":")), host.last != UInt8(ascii: "]"),
        signs(host[..<colon])
      {
        return
      }
    }
    throw NCMBError.badSignature
  }
}
