// libFuzzer target for the datastore's JSON reader and its canonical writer: compiled with
// Sources/Datastore/JSONValue.swift, CanonicalJSON.swift and DatastoreError.swift by
// Scripts/fuzz.sh. A parsed value must print and parse back equal; text the canonical writer
// takes (a server writes rows straight from it) must be written exactly as the parsed value is.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  let value = try? JSONValue.parse(text)
  if let value {
    guard let again = try? JSONValue.parse(value.jsonText()), again == value else {
      fatalError("JSON does not survive printing and parsing again")
    }
  }
  var copy = text
  let written = copy.withUTF8 { bytes -> [UInt8]? in
    var reader = CanonicalJSON(bytes: bytes)
    var out: [UInt8] = []
    guard let end = reader.value(at: 0, depth: 0, to: &out), reader.skipSpace(end) == bytes.count
    else { return nil }
    return out
  }
  if let written {
    guard let value, written == value.jsonBytes() else {
      fatalError("the canonical writer took text it writes otherwise than the parsed value")
    }
  }
  return 0
}
