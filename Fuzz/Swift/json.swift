// libFuzzer target for the datastore's JSON reader: compiled with Sources/Datastore/JSONValue.swift
// and DatastoreError.swift by Scripts/fuzz.sh. A parsed value must print and parse back equal.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  if let value = try? JSONValue.parse(text) {
    guard let again = try? JSONValue.parse(value.jsonText()), again == value else {
      fatalError("JSON does not survive printing and parsing again")
    }
  }
  return 0
}
