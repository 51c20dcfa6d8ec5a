/// A refusal on the wire: NCMB's `{"code","error"}` with the field, the reason in English and
/// the reason as the catalogue's case (`ReasonWire`), so the remote engine throws the
/// `DatastoreError` the server's engine threw and says it in its reader's language.
extension DatastoreError {
  public var wire: JSONValue {
    var body: [String: JSONValue] = ["code": .string(code.rawValue), "error": .string(message)]
    if let field { body["field"] = .string(field) }
    if let detail { body["detail"] = .string(detail) }
    if let reason = reason?.wire { body["reason"] = reason }
    return .object(body)
  }

  /// The error an answer's body says, when it says one in the board's or NCMB's shape. A code
  /// of NCMB's the engine has none for (the server's storage per user, E413002) with a reason of
  /// the catalogue is that reason, refused as invalid input.
  public init?(wire value: JSONValue) {
    guard let object = value.objectValue, let text = object["code"]?.stringValue else {
      return nil
    }
    let field = object["field"]?.stringValue.map { Wire.printable($0, limit: 100) }
    let reason = object["reason"].flatMap(Reason.init(wire:))
    guard let code = ErrorCode(rawValue: text) else {
      guard let reason, text.hasPrefix("E4") else { return nil }
      self.init(.invalid, field: field, reason: reason)
      return
    }
    if let reason {
      self.init(code, field: field, reason: reason)
      return
    }
    let detail = object["detail"]?.stringValue.map { Wire.printable($0, limit: 500) }
    self.init(code, field: field, detail: detail)
  }
}

extension Wire {
  /// Text from the other side fit for a one-line message: control, format (bidi) and
  /// separator characters become `?`, at most `limit` characters.
  public static func printable(_ text: String, limit: Int) -> String {
    var out = String.UnicodeScalarView()
    for scalar in text.unicodeScalars.prefix(limit) {
      switch scalar.properties.generalCategory {
      case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate,
        .unassigned:
        out.append("?")
      default: out.append(scalar)
      }
    }
    return String(out)
  }
}
