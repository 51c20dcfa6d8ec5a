/// A full-text search: objects of the target classes whose text fields (declared by
/// `IndexSpec(textOf:fields:)`) hold every term. A term matches as a substring, ASCII letters in
/// either case; a term of any length (one Japanese character too) and any characters (quotes,
/// `*`, `-`, `:` and `NEAR` are just text). Only objects the caller may read come back, as for
/// `find`.
public struct TextSearch: Sendable, Equatable {
  /// A class to look in, and equality conditions its objects must meet (`thread` = a pointer).
  public struct Target: Sendable, Equatable {
    public var className: String
    public var equalTo: [String: JSONValue]

    public init(className: String, equalTo: [String: JSONValue] = [:]) {
      self.className = className
      self.equalTo = equalTo
    }
  }

  public var terms: [String]
  public var targets: [Target]
  public var limit: Int
  public var skip: Int

  /// Past these a query is refused (`E400002 query is invalid.`): a search is typed by a person.
  public static let maximumTerms = 16
  public static let maximumTermLength = 100

  public init(terms: [String], targets: [Target], limit: Int = 20, skip: Int = 0) {
    self.terms = terms
    self.targets = targets
    self.limit = limit
    self.skip = skip
  }

  /// True when `text` holds `term`, ASCII letters compared without case: the engines' rule,
  /// for callers that show where a match is and for tests.
  public static func contains(_ text: String, _ term: String) -> Bool {
    range(of: term, in: text) != nil
  }

  /// Where `term` first occurs in `text` (unicode scalar offsets), ASCII case ignored.
  public static func range(of term: String, in text: String) -> Range<Int>? {
    let needle = Array(term.unicodeScalars).map(foldASCII)
    guard !needle.isEmpty else { return nil }
    let haystack = Array(text.unicodeScalars).map(foldASCII)
    guard haystack.count >= needle.count else { return nil }
    for start in 0...(haystack.count - needle.count)
    where haystack[start] == needle[0]
      && haystack[start..<start + needle.count].elementsEqual(needle)
    {
      return start..<start + needle.count
    }
    return nil
  }

  private static func foldASCII(_ scalar: Unicode.Scalar) -> UInt32 {
    (65...90).contains(scalar.value) ? scalar.value + 32 : scalar.value
  }
}

extension TextSearch {
  /// The text fields declared by `IndexSpec(textOf:)`, by class, in declaration order.
  static func fields(of specs: [IndexSpec]) -> [String: [String]] {
    var fields: [String: [String]] = [:]
    for spec in specs where spec.kind == .text {
      for field in spec.fields where !(fields[spec.className] ?? []).contains(field) {
        fields[spec.className, default: []].append(field)
      }
    }
    return fields
  }

  /// `term` with ASCII letters in lower case (what the engines compare).
  static func foldedASCII(_ term: String) -> String {
    String(String.UnicodeScalarView(term.unicodeScalars.map { foldScalar($0) }))
  }

  private static func foldScalar(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
    (65...90).contains(scalar.value) ? Unicode.Scalar(scalar.value + 32)! : scalar
  }
}
