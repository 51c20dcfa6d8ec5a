// libFuzzer target for the multipart/form-data reader: compiled with
// Sources/NCMBServer/MultipartForm.swift by Scripts/fuzz.sh. The input's first line is the
// Content-Type header's value, the rest the body. Reading never traps; every part's bytes lie
// inside the body, after its headers; at most `maximumParts` parts.
import Foundation

/// The reader's refusals, without the NCMB module.
struct NCMBError: Error {
  static func invalid(_ field: String, _ why: String? = nil) -> NCMBError { NCMBError() }
  static func mediaType(_ why: String) -> NCMBError { NCMBError() }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMultipart(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let input = Array(UnsafeBufferPointer(start: data, count: size))
  let newline = input.firstIndex(of: 0x0A) ?? input.count
  let contentType = String(decoding: input[..<newline], as: UTF8.self)
  let body = newline < input.count ? Array(input[(newline + 1)...]) : []
  guard let boundary = try? MultipartForm.boundary(contentType: contentType),
    let form = try? MultipartForm(body, boundary: boundary)
  else { return 0 }
  guard form.parts.count <= MultipartForm.maximumParts else { fatalError("too many parts") }
  for part in form.parts {
    guard part.bytes.startIndex >= 0, part.bytes.endIndex <= body.count else {
      fatalError("a part outside the body")
    }
  }
  return 0
}
