import Forum

/// Untrusted text made safe for a terminal, and measured in terminal cells.
enum SafeText {
  /// Text from the database as it may be shown: control characters become visible symbols
  /// (ESC shows as ␛), C1 controls as U+FFFD, and bidi overrides and isolates are dropped so
  /// nothing can move the cursor, recolour the screen or reorder what a person reads.
  /// Newlines survive only when `keepNewlines`; tabs become a space. The line and paragraph
  /// separators (U+2028, U+2029), which some terminals break lines at, show as ␤ and ¶.
  /// Invisible characters are dropped so two names that look alike are alike: zero-width
  /// spaces and joiners (a joiner stays inside an emoji sequence), and Unicode tag characters,
  /// which can smuggle hidden ASCII (they stay only in the flag sequences they exist for).
  /// A character shows at most `PostRules.marksPerCharacter` combining marks, so a row stored
  /// before that limit cannot flood the screen.
  ///
  /// With `stoppingPast`, stops once the result is wider than that many cells: what a line
  /// truncated to that width shows is the same, and a description of many kilobytes costs what
  /// its first line does.
  static func sanitize(_ text: String, keepNewlines: Bool = false, stoppingPast limit: Int = .max)
    -> String
  {
    // UTF-8 bytes, made a String once: appending scalars to a String one by one cost more than
    // deciding what to append.
    var out: [UInt8] = []
    out.reserveCapacity(min(text.utf8.count, limit == .max ? .max : limit * 4 + 16))
    var shown = 0
    var joinedBefore = false
    func emit(_ scalar: Unicode.Scalar) {
      if scalar.value < 0x80 {
        out.append(UInt8(scalar.value))
      } else {
        UTF8.encode(scalar) { out.append($0) }
      }
      // Never more than `width` counts (an emoji sequence is one wide cell): the scalars a
      // joiner, a skin tone or a variation selector adds count nothing.
      if limit != .max && !joinedBefore && !extendsEmoji(scalar) { shown += cells(scalar) }
      joinedBefore = scalar.value == 0x200D
    }
    var previous: Unicode.Scalar?
    var inFlagTags = false
    var marks = 0
    for scalar in text.unicodeScalars {
      if shown > limit { break }
      defer { previous = scalar }
      // Printable ASCII, most of most text: no mark, no tag, nothing to replace.
      if scalar.value >= 0x20 && scalar.value < 0x7F {
        marks = 0
        inFlagTags = false
        emit(scalar)
        continue
      }
      switch scalar.properties.generalCategory {
      case .nonspacingMark, .spacingMark, .enclosingMark:
        marks += 1
        if marks > PostRules.marksPerCharacter { continue }
      default:
        marks = 0
      }
      if (0xE0000...0xE007F).contains(scalar.value) {
        // A subdivision flag: U+1F3F4, tags, then U+E007F.
        inFlagTags = inFlagTags || previous?.value == 0x1F3F4
        if inFlagTags { emit(scalar) }
        if scalar.value == 0xE007F { inFlagTags = false }
        continue
      }
      inFlagTags = false
      switch scalar.value {
      case 0x0A where keepNewlines: emit(scalar)
      case 0x0A, 0x0D, 0x09: emit(" ")
      case 0x00...0x1F: emit(Unicode.Scalar(0x2400 + scalar.value)!)
      case 0x7F: emit("\u{2421}")
      case 0x80...0x9F: emit("\u{FFFD}")
      case 0x200E, 0x200F, 0x061C, 0x202A...0x202E, 0x2066...0x2069: continue
      case 0x2028: emit("\u{2424}")
      case 0x2029: emit("\u{B6}")
      case 0x200B, 0x2060...0x2064, 0xFEFF, 0x180E, 0x200C: continue
      case 0x200D where !joinsEmoji(previous): continue
      default: emit(scalar)
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// A zero-width joiner after an emoji (or its variation selector or skin tone) builds an
  /// emoji sequence; anywhere else it is an invisible character.
  private static func joinsEmoji(_ previous: Unicode.Scalar?) -> Bool {
    guard let previous, previous.value > 0x7F else { return false }
    return previous.properties.isEmoji || previous.value == 0xFE0F
  }

  /// Cells a scalar takes: 2 for East Asian wide and fullwidth, 0 for combining marks and
  /// format characters, 1 otherwise.
  static func cells(_ scalar: Unicode.Scalar) -> Int {
    let value = scalar.value
    if value < 0x300 { return value < 0x20 || value == 0x7F ? 0 : 1 }
    // Kana, CJK ideographs, Hangul syllables and fullwidth forms are wide and hold no mark (the
    // kana voicing marks 0x3099–0x309A are left out): decided without Unicode's property tables,
    // which cost a lookup per character of Japanese text.
    switch value {
    case 0x3000...0x3029, 0x3041...0x3098, 0x309B...0x30FF, 0x4E00...0x9FFF, 0xAC00...0xD7A3,
      0xFF01...0xFF60:
      return 2
    default: break
    }
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format: return 0
    default: break
    }
    if value == 0x200B || (0xFE00...0xFE0F).contains(value) { return 0 }
    return isWide(value) ? 2 : 1
  }

  /// Scalars with no grapheme-joining behaviour (Unicode's Grapheme_Cluster_Break "Other", and
  /// not Extended_Pictographic): printable ASCII, ideographic punctuation, kana, CJK ideographs,
  /// fullwidth forms. A character boundary lies between any two of them.
  static func neverJoins(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x20...0x7E, 0x3000...0x3029, 0x3041...0x3096, 0x30A0...0x30FF, 0x4E00...0x9FFF,
      0xFF01...0xFF60:
      return true
    default:
      return false
    }
  }

  private static func isWide(_ value: UInt32) -> Bool {
    switch value {
    case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0, 0x23F3,
      0x25FD...0x25FE, 0x2614...0x2615, 0x2648...0x2653, 0x267F, 0x2693, 0x26A1, 0x26AA...0x26AB,
      0x26BD...0x26BE, 0x26C4...0x26C5, 0x26CE, 0x26D4, 0x26EA, 0x26F2...0x26F3, 0x26F5, 0x26FA,
      0x26FD, 0x2705, 0x270A...0x270B, 0x2728, 0x274C, 0x274E, 0x2753...0x2755, 0x2757,
      0x2795...0x2797, 0x27B0, 0x27BF, 0x2B1B...0x2B1C, 0x2B50, 0x2B55, 0x2E80...0x303E,
      0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F,
      0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60,
      0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F004, 0x1F0CF,
      0x1F18E, 0x1F191...0x1F19A, 0x1F200...0x1F251, 0x1F300...0x1F64F, 0x1F680...0x1F6FF,
      0x1F7E0...0x1F7EB, 0x1F90C...0x1F9FF, 0x1FA70...0x1FAFF, 0x20000...0x3FFFD:
      return true
    default:
      return false
    }
  }

  /// Display width of (already sanitized) text in terminal cells.
  static func width(_ text: String) -> Int {
    var total = 0
    var sequence = false
    for scalar in text.unicodeScalars {
      total += cells(scalar)
      sequence = sequence || extendsEmoji(scalar)
    }
    // Only text holding an emoji sequence needs its characters found.
    guard sequence else { return total }
    return text.reduce(0) { $0 + cells($1) }
  }

  /// Cells a character (grapheme cluster) takes: an emoji sequence (joined by U+200D, with a
  /// skin tone or an emoji variation selector) is drawn as one wide cell, as terminals do.
  static func cells(_ character: Character) -> Int {
    cells(scalars: character.unicodeScalars)
  }

  static func cells<S: Collection>(scalars: S) -> Int where S.Element == Unicode.Scalar {
    var sum = 0
    var sequence = false
    for scalar in scalars {
      sum += cells(scalar)
      sequence = sequence || extendsEmoji(scalar)
    }
    return sequence && scalars.count > 1 ? 2 : sum
  }

  /// U+200D, U+FE0F and the skin tones U+1F3FB–1F3FF: what makes an emoji sequence.
  static func extendsEmoji(_ scalar: Unicode.Scalar) -> Bool {
    let value = scalar.value
    return value == 0x200D || value == 0xFE0F || (0x1F3FB...0x1F3FF).contains(value)
  }

  /// Cuts text to at most `limit` cells, ending with `…` when something was cut.
  /// Never splits a character (grapheme cluster).
  static func truncate(_ text: String, to limit: Int) -> String {
    guard limit > 0 else { return "" }
    guard width(text) > limit else { return text }
    var out = ""
    var used = 0
    for character in text {
      let w = cells(character)
      if used + w > limit - 1 { break }
      out.append(character)
      used += w
    }
    return out + "…"
  }

  /// Pads with spaces to exactly `cells` (truncating first when longer).
  static func pad(_ text: String, to cells: Int, alignRight: Bool = false) -> String {
    let cut = truncate(text, to: cells)
    let fill = String(repeating: " ", count: max(0, cells - width(cut)))
    return alignRight ? fill + cut : cut + fill
  }

  /// Splits text into lines of at most `limit` cells, breaking at spaces where it can.
  ///
  /// One pass over the characters: a word is placed when the space or newline after it is
  /// reached, and the places a word longer than a line would be cut are noted on the way (Japanese
  /// has no spaces: a sentence is one word). Splitting into paragraphs and words first walked
  /// every character three times.
  static func wrap(_ text: String, to limit: Int) -> [String] {
    var lines: [String] = []
    var line = ""
    var used = 0
    var word = text.startIndex
    var wordWidth = 0
    // Where the word is cut if it is longer than a line, and the cells since the last cut.
    var cuts: [String.Index] = []
    var pieceWidth = 0

    func place(_ end: String.Index) {
      if used > 0 && used + 1 + wordWidth > limit {
        lines.append(line)
        line = ""
        used = 0
      }
      if used > 0 {
        line += " "
        used += 1
      }
      // Pieces are taken by scalars: their ends are character boundaries already.
      if used + wordWidth <= limit {
        line += Substring(text.unicodeScalars[word..<end])
        used += wordWidth
        return
      }
      // Longer than a line (so the line is empty): whole pieces, the last one left open.
      var start = word
      for cut in cuts {
        line += Substring(text.unicodeScalars[start..<cut])
        lines.append(line)
        line = ""
        start = cut
      }
      line += Substring(text.unicodeScalars[start..<end])
      used = pieceWidth
    }

    let bytes = text.utf8
    let scalars = text.unicodeScalars
    var index = text.startIndex
    while index < text.endIndex {
      let scalar = scalars[index]
      let scalarEnd = scalars.index(after: index)
      // Between two scalars of the scripts that never join (printable ASCII, kana, ideographs,
      // fullwidth forms) a character always ends: no grapheme-break search there.
      let next =
        scalarEnd == text.endIndex
          || (SafeText.neverJoins(scalar) && SafeText.neverJoins(scalars[scalarEnd]))
        ? scalarEnd : text.index(after: index)
      // A space or newline ends a word only as a character of its own, as `split` would have it
      // (a space with a combining mark on it is part of the word).
      let byte = bytes[index]
      if (byte == 0x20 || byte == 0x0A) && next == scalarEnd {
        place(index)
        if byte == 0x0A {
          lines.append(line)
          line = ""
          used = 0
        }
        word = next
        wordWidth = 0
        cuts.removeAll(keepingCapacity: true)
        pieceWidth = 0
      } else {
        let w =
          next == scalarEnd ? cells(scalar) : cells(scalars: scalars[index..<next])
        if pieceWidth + w > limit && pieceWidth > 0 {
          cuts.append(index)
          pieceWidth = 0
        }
        pieceWidth += w
        wordWidth += w
      }
      index = next
    }
    place(text.endIndex)
    lines.append(line)
    return lines
  }
}

extension SafeText {
  /// The end of `text` that fits in `cells`, whole characters only.
  static func suffix(_ text: String, cells: Int) -> String {
    var kept: [Character] = []
    var used = 0
    for character in text.reversed() {
      let w = SafeText.cells(character)
      if used + w > cells { break }
      kept.append(character)
      used += w
    }
    return String(kept.reversed())
  }
}
