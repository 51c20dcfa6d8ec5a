import ForumCrypto

/// A session's answer on the wire (`GET /2013-09-01/forum/session`): its principals, its user
/// and whether it owns the board, with the answer's tag.
///
///     {"principals":{…},"user":{…},"owner":false,"tag":"3f…"}
///
/// A remote engine keeps the answer (the profile, beside the session) and, instead of asking
/// for it again at the next command, sends its tag with that command's first request
/// (`tagHeader`). The server compares it with the tag of the session's answer now and, when
/// they differ (a role granted or revoked, the user or the board's owner changed), refuses the
/// request before doing anything (`changedStatus`): the engine then asks for the answer and
/// sends the request again. So the principals a client decides by are always the server's.
public enum SessionWire {
  /// The request header that carries a kept answer's tag.
  public static let tagHeader = "X-Forum-Session-Tag"
  /// The status of a request refused because its tag is not the session's answer's now.
  public static let changedStatus = 412
  /// The error code said with it.
  public static let changedCode = "E412001"

  /// The answer with its tag.
  public static func answer(principals: Principals, user: DataObject, owner: Bool) -> JSONValue {
    var fields: [String: JSONValue] = [
      "principals": principals.wire, "user": user.wire, "owner": .bool(owner),
    ]
    fields["tag"] = .string(tag(of: .object(fields)))
    return .object(fields)
  }

  /// The tag of an answer without its tag: 32 hex digits of the SHA-256 of its JSON (keys
  /// sorted, so the same answer has the same tag).
  public static func tag(of answer: JSONValue) -> String {
    String(Crypto.hex(Crypto.sha256(answer.jsonBytes())).prefix(32))
  }

  /// True when `tag` is one `tag(of:)` makes (a profile is a file; a header is input).
  public static func isTag(_ tag: String) -> Bool {
    tag.utf8.count == 32
      && tag.utf8.allSatisfy {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
          || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
      }
  }
}
