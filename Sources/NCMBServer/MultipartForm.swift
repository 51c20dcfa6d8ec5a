/// A `multipart/form-data` body (RFC 7578 over RFC 2046) as the handler reads it from the bytes
/// the transport kept: whatever a correct encoder may write is read — a preamble before the
/// first delimiter, an epilogue after the closing one (the Swift SDK's CRLF), transport padding
/// after a delimiter, a quoted boundary, parameters quoted or not (the Android SDK writes
/// `name=file; filename=x.png`), a part with a filename and no Content-Type. libmicrohttpd's
/// post processor refuses both the epilogue and unquoted names, so the file upload reads the
/// body here. Bounded: at most `maximumParts` parts with at most `maximumHeaderBytes` of
/// headers each.
struct MultipartForm {
  struct Part {
    /// `name`, lowercase as sent (`acl`, `file`).
    var name: String
    var fileName: String?
    var contentType: String?
    var bytes: ArraySlice<UInt8>
  }

  static let maximumParts = 16
  static let maximumHeaderBytes = 8 << 10

  let parts: [Part]

  /// The boundary of a `multipart/form-data` content type (nil for any other type); `E400002`
  /// for a multipart type without a usable boundary (RFC 2046: 1 to 70 characters).
  static func boundary(contentType: String?) throws -> [UInt8]? {
    guard let contentType else { return nil }
    let (type, parameters) = headerValue(Substring(contentType))
    guard type.lowercased() == "multipart/form-data" else {
      if type.lowercased().hasPrefix("multipart/") {
        throw NCMBError.mediaType("a file is sent as multipart/form-data")
      }
      return nil
    }
    guard let boundary = parameters["boundary"], (1...70).contains(boundary.utf8.count) else {
      throw NCMBError.invalid("Content-Type", "multipart/form-data needs a boundary")
    }
    return Array(boundary.utf8)
  }

  /// Reads `body`; `E400002` when it has no delimiter, a part without a name or headers, or
  /// no closing delimiter.
  init(_ body: [UInt8], boundary: [UInt8]) throws {
    func malformed(_ why: String) -> NCMBError { NCMBError.invalid("multipart body", why) }
    let dashBoundary: [UInt8] = [0x2D, 0x2D] + boundary
    let delimiter: [UInt8] = [0x0D, 0x0A] + dashBoundary
    // The first delimiter may start the body; anything before it is a preamble.
    var at: Int
    if body.starts(with: dashBoundary) {
      at = dashBoundary.count
    } else if let found = MultipartForm.find(delimiter, in: body, from: 0) {
      at = found + delimiter.count
    } else {
      throw malformed("no boundary")
    }
    var parts: [Part] = []
    while true {
      // After a delimiter: `--` closes (what follows is an epilogue), else padding and CRLF.
      if body[at...].starts(with: [0x2D, 0x2D]) { break }
      while at < body.count, body[at] == 0x20 || body[at] == 0x09 { at += 1 }
      guard body[at...].starts(with: [0x0D, 0x0A]) else { throw malformed("cut short") }
      at += 2
      guard parts.count < MultipartForm.maximumParts else { throw malformed("too many parts") }
      let headerEnd: Int
      if body[at...].starts(with: [0x0D, 0x0A]) {
        headerEnd = at  // a part without headers
      } else {
        guard let end = MultipartForm.find([0x0D, 0x0A, 0x0D, 0x0A], in: body, from: at),
          end - at <= MultipartForm.maximumHeaderBytes
        else { throw malformed("a part's headers are cut short or too long") }
        headerEnd = end + 2
      }
      let dataStart = headerEnd + 2
      guard let dataEnd = MultipartForm.find(delimiter, in: body, from: dataStart) else {
        throw malformed("no closing boundary")
      }
      let header = String(decoding: body[at..<headerEnd], as: UTF8.self)
      parts.append(try MultipartForm.part(header, body[dataStart..<max(dataStart, dataEnd)]))
      at = dataEnd + delimiter.count
    }
    self.parts = parts
  }

  /// The first part called `name`.
  subscript(name: String) -> Part? { parts.first { $0.name == name } }

  private static func part(_ header: String, _ bytes: ArraySlice<UInt8>) throws -> Part {
    var name: String?
    var fileName: String?
    var contentType: String?
    for line in header.split(separator: "\r\n") {
      guard let colon = line.firstIndex(of: ":") else { continue }
      let field = line[..<colon].lowercased()
      let value = line[line.index(after: colon)...]
      if field == "content-disposition" {
        let (_, parameters) = headerValue(value)
        name = parameters["name"]
        fileName = parameters["filename"]
      } else if field == "content-type" {
        contentType = value.trimmingSpaces
      }
    }
    guard let name else {
      throw NCMBError.invalid("multipart body", "a part has no Content-Disposition name")
    }
    return Part(name: name, fileName: fileName, contentType: contentType, bytes: bytes)
  }

  /// `value; name=token; name="quoted \" string"`: the value and its parameters (names
  /// lowercased).
  static func headerValue(_ text: Substring) -> (String, [String: String]) {
    var parameters: [String: String] = [:]
    let characters = Array(text)
    var index = 0
    func skipSpaces() {
      while index < characters.count, characters[index] == " " || characters[index] == "\t" {
        index += 1
      }
    }
    func token(until stops: Set<Character>) -> String {
      var result = ""
      while index < characters.count, !stops.contains(characters[index]) {
        result.append(characters[index])
        index += 1
      }
      return result
    }
    skipSpaces()
    let value = Substring(token(until: [";"])).trimmingSpaces
    while index < characters.count {
      index += 1  // the `;`
      skipSpaces()
      let name = Substring(token(until: ["=", ";"])).trimmingSpaces.lowercased()
      guard index < characters.count, characters[index] == "=" else { continue }
      index += 1
      skipSpaces()
      var parameter = ""
      if index < characters.count, characters[index] == "\"" {
        index += 1
        while index < characters.count, characters[index] != "\"" {
          if characters[index] == "\\", index + 1 < characters.count { index += 1 }
          parameter.append(characters[index])
          index += 1
        }
        index += 1
        _ = token(until: [";"])
      } else {
        parameter = Substring(token(until: [";"])).trimmingSpaces
      }
      if !name.isEmpty, parameters[name] == nil { parameters[name] = parameter }
    }
    return (value, parameters)
  }

  /// Where `needle` first starts in `haystack` at or after `from`.
  static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
    guard let first = needle.first, haystack.count >= needle.count else { return nil }
    var index = max(0, from)
    let last = haystack.count - needle.count
    return haystack.withUnsafeBufferPointer { bytes in
      while index <= last {
        if bytes[index] == first {
          var match = true
          for offset in 1..<needle.count where bytes[index + offset] != needle[offset] {
            match = false
            break
          }
          if match { return index }
        }
        index += 1
      }
      return nil
    }
  }
}

extension Substring {
  /// Without the spaces and tabs around it.
  fileprivate var trimmingSpaces: String {
    var text = self
    while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
    while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
    return String(text)
  }
}
