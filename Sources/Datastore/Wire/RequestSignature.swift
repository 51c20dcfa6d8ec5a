import ForumCrypto

/// NCMB's request signature as a client makes it (the server checks it in `NCMBSignature`):
/// HMAC-SHA256 with the client key over `METHOD \n HOST \n PATH \n` and the query's parameters
/// with the four signature ones, sorted by name, joined with `&`; base64.
public enum RequestSignature {
  public static func sign(
    method: String, host: String, path: String, rawQuery: String, applicationKey: String,
    clientKey: String, timestamp: String
  ) -> String {
    var parameters = rawQuery.split(separator: "&").map(String.init)
    parameters += [
      "SignatureMethod=HmacSHA256", "SignatureVersion=2",
      "X-NCMB-Application-Key=" + applicationKey,
      "X-NCMB-Timestamp=" + timestamp,
    ]
    // Stable by name in byte order, as the server sorts.
    let sorted = parameters.enumerated().sorted { a, b in
      let (x, y) = (name(a.element), name(b.element))
      return x == y ? a.offset < b.offset : x.lexicographicallyPrecedes(y)
    }.map(\.element)
    let text = [method, host, path, sorted.joined(separator: "&")].joined(separator: "\n")
    return Crypto.base64(Crypto.hmacSHA256(key: Array(clientKey.utf8), message: Array(text.utf8)))
  }

  private static func name(_ parameter: String) -> [UInt8] {
    Array(parameter.utf8.prefix { $0 != UInt8(ascii: "=") })
  }
}
