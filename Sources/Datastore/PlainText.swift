// The few text helpers full Foundation would give, written out so that the program links only
// FoundationEssentials: full Foundation brings ICU, about 40 MB of a static binary.

extension StringProtocol {
  /// Without leading and trailing white space and line breaks (Foundation's
  /// `.whitespacesAndNewlines`: Unicode White_Space, and U+200B as Foundation counts it).
  public func trimmingWhiteSpace() -> String {
    trimming { $0.properties.isWhitespace || $0 == "\u{200B}" }
  }

  /// Without leading and trailing spaces and tabs; line breaks stay (Foundation's
  /// `.whitespaces`: general category Zs, the tab and U+200B).
  public func trimmingSpaces() -> String {
    trimming {
      $0 == "\t" || $0 == "\u{200B}" || $0.properties.generalCategory == .spaceSeparator
    }
  }

  private func trimming(_ drop: (Unicode.Scalar) -> Bool) -> String {
    let scalars = unicodeScalars
    // Nothing to trim, the usual case: the text itself, not a copy built scalar by scalar.
    if let first = scalars.first, let last = scalars.last, !drop(first), !drop(last) {
      return String(self)
    }
    guard let first = scalars.firstIndex(where: { !drop($0) }) else { return "" }
    let last = scalars.lastIndex(where: { !drop($0) })!
    var kept = String.UnicodeScalarView()
    kept.append(contentsOf: scalars[first...last])
    return String(kept)
  }
}

/// `value` in `radix` with leading zeros up to `width` digits (`String(format: "%04x")`).
public func zeroPadded(_ value: some BinaryInteger, width: Int, radix: Int = 10) -> String {
  let digits = String(value, radix: radix)
  return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
