import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The objects of one NCMB export file (`{"results":[…]}`, or a bare array), read one at a
/// time from a fixed-size buffer, so that an import holds one object of it, never the file.
/// Each element is parsed on its own (`JSONValue.parse`); the structure around them is checked
/// by this scanner, byte by byte.
struct NCMBExportStream {
  enum Failure: Error, Equatable {
    /// Not JSON, or not UTF-8.
    case badJSON
    /// JSON, but not `{"results":[…]}` nor `[…]`.
    case noResults
    /// Element `index` (from 0) is not an object.
    case notAnObject(index: Int)
    /// Element `index` is larger than `maximumObjectBytes`.
    case tooLarge(index: Int)
  }

  /// The largest object read: NCMB limits an object to 16 MB of JSON.
  static let maximumObjectBytes = 16 * 1024 * 1024
  static let chunkBytes = 1 << 20

  private let file: UnsafeMutablePointer<FILE>
  private var buffer: [UInt8]
  private var position = 0
  private var end = 0
  private var atEnd = false
  private var started = false
  private var finished = false
  /// True inside `{"results":…}` (then the object's other keys follow the array).
  private var wrapped = false
  private(set) var index = 0

  /// Opens `path`; nil when it cannot be read.
  init?(path: String) {
    guard let file = fopen(path, "rb") else { return nil }
    self.file = file
    buffer = [UInt8](repeating: 0, count: NCMBExportStream.chunkBytes)
  }

  func close() { fclose(file) }

  /// The next object with its place in the file (from 0); nil after the last.
  mutating func next() throws(Failure) -> [String: JSONValue]? {
    if finished { return nil }
    if !started {
      started = true
      try start()
    } else {
      skipSpace()
      switch take() {
      case UInt8(ascii: ","): break
      case UInt8(ascii: "]"):
        try finish()
        return nil
      default: throw .badJSON
      }
    }
    skipSpace()
    if index == 0, peek() == UInt8(ascii: "]") {
      _ = take()
      try finish()
      return nil
    }
    var element: [UInt8] = []
    try capture(into: &element)
    defer { index += 1 }
    guard let text = String(validating: element, as: UTF8.self),
      let value = try? JSONValue.parse(text)
    else { throw .badJSON }
    guard let object = value.objectValue else { throw .notAnObject(index: index) }
    return object
  }

  /// Up to the first element: `[`, or `{` with keys before `"results": [`.
  private mutating func start() throws(Failure) {
    skipSpace()
    switch take() {
    case UInt8(ascii: "["): return
    case UInt8(ascii: "{"): wrapped = true
    case nil: throw .badJSON
    default: throw .noResults
    }
    while true {
      skipSpace()
      guard peek() == UInt8(ascii: "\"") else {
        throw peek() == UInt8(ascii: "}") ? .noResults : .badJSON
      }
      var key: [UInt8] = []
      try capture(into: &key)
      skipSpace()
      guard take() == UInt8(ascii: ":") else { throw .badJSON }
      skipSpace()
      if key == Array(#""results""#.utf8) {
        guard peek() == UInt8(ascii: "[") else { throw .noResults }
        _ = take()
        return
      }
      var skipped: [UInt8] = []
      try capture(into: &skipped, keep: false)
      skipSpace()
      guard take() == UInt8(ascii: ",") else { throw .noResults }
    }
  }

  /// After the array's `]`: the rest of the wrapping object, then nothing but space.
  private mutating func finish() throws(Failure) {
    finished = true
    if wrapped {
      while true {
        skipSpace()
        switch take() {
        case UInt8(ascii: "}"):
          wrapped = false
        case UInt8(ascii: ","):
          skipSpace()
          var key: [UInt8] = []
          try capture(into: &key, keep: false)
          skipSpace()
          guard take() == UInt8(ascii: ":") else { throw .badJSON }
          skipSpace()
          var skipped: [UInt8] = []
          try capture(into: &skipped, keep: false)
          continue
        default: throw .badJSON
        }
        break
      }
    }
    skipSpace()
    guard peek() == nil else { throw .badJSON }
  }

  /// One JSON value's bytes (an object, array, string or scalar), balanced outside strings;
  /// its syntax inside is left to `JSONValue.parse`. With `keep` false, only scanned.
  private mutating func capture(into out: inout [UInt8], keep: Bool = true) throws(Failure) {
    var depth = 0
    var inString = false
    var escaped = false
    while let byte = peek() {
      if inString {
        _ = take()
        if keep { out.append(byte) }
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
          if depth == 0 { return }
        }
      } else {
        switch byte {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
          if depth == 0 { return }
          depth -= 1
        case UInt8(ascii: ","), 0x20, 0x09, 0x0A, 0x0D:
          if depth == 0 { return }
        default: break
        }
        _ = take()
        if keep { out.append(byte) }
        if depth == 0, byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") { return }
      }
      if out.count > NCMBExportStream.maximumObjectBytes { throw .tooLarge(index: index) }
    }
    if inString || depth > 0 { throw .badJSON }
  }

  private mutating func skipSpace() {
    while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
      position += 1
    }
  }

  private mutating func peek() -> UInt8? {
    if position == end {
      guard !atEnd else { return nil }
      end = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
      position = 0
      if end == 0 {
        atEnd = true
        return nil
      }
    }
    return buffer[position]
  }

  private mutating func take() -> UInt8? {
    guard let byte = peek() else { return nil }
    position += 1
    return byte
  }
}
