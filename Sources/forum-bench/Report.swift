import Foundation

/// What a figure is measured in; decides how it prints.
enum Quantity {
  case seconds(Double)
  case perSecond(Double)
  case bytes(Int)

  var number: Double {
    switch self {
    case .seconds(let value), .perSecond(let value): return value
    case .bytes(let value): return Double(value)
    }
  }

  var text: String {
    switch self {
    case .seconds(let value):
      if value < 1e-3 { return String(format: "%.1f µs", value * 1e6) }
      if value < 1 { return String(format: "%.2f ms", value * 1e3) }
      return String(format: "%.2f s", value)
    case .perSecond(let value): return String(format: "%.0f/s", value)
    case .bytes(let value): return String(format: "%.1f MB", Double(value) / 1_048_576)
    }
  }
}

/// A goal a figure is held to.
enum Target {
  /// figure / floor at most this.
  case ratioAtMost(Double)
  case atMost(Quantity)
  case atLeast(Quantity)

  var text: String {
    switch self {
    case .ratioAtMost(let ratio): return "≤ \(format(ratio: ratio))"
    case .atMost(let quantity): return "< \(quantity.text)"
    case .atLeast(let quantity): return "≥ \(quantity.text)"
    }
  }

  func isMet(value: Quantity, ratio: Double?) -> Bool {
    switch self {
    case .ratioAtMost(let limit): return (ratio ?? .infinity) <= limit
    case .atMost(let limit): return value.number < limit.number
    case .atLeast(let limit): return value.number >= limit.number
    }
  }
}

func format(ratio: Double) -> String { String(format: "%.2fx", ratio) }

/// One line of a table: a figure, optionally beside a floor, with the ratio and a target.
struct Line {
  var figure: String
  var value: Quantity
  var floorName: String = ""
  var floor: Quantity?
  var target: Target?
  /// False for lines that compare two figures of the same board: the growth table skips them.
  var showsGrowth = true

  /// figure / floor, or floor / figure for rates, so "more than 1" always means "slower".
  var ratio: Double? {
    guard let floor else { return nil }
    if case .perSecond = value { return floor.number / value.number }
    return value.number / floor.number
  }

  var verdict: String {
    guard let target else { return "" }
    return target.isMet(value: value, ratio: ratio) ? "met" : "**missed**"
  }
}

/// A Markdown table whose columns line up in a terminal too.
struct Table {
  var title: String
  var lines: [Line] = []

  static let header = ["measurement", "forum", "floor", "floor value", "ratio", "target", ""]

  var text: String {
    var previous = ""
    let rows = lines.map { line -> [String] in
      // A figure beside several floors is named once.
      let name = line.figure == previous ? "" : line.figure
      previous = line.figure
      return [
        name, name.isEmpty ? "" : line.value.text, line.floorName, line.floor?.text ?? "",
        line.ratio.map(format(ratio:)) ?? "", line.target?.text ?? "", line.verdict,
      ]
    }
    return "\(title)\n\n" + markdown([Table.header] + rows)
  }
}

/// Rows as a Markdown table padded to column width (counted in characters).
func markdown(_ rows: [[String]]) -> String {
  let columns = rows.map(\.count).max() ?? 0
  let widths = (0..<columns).map { column in
    rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
  }
  func render(_ cells: [String]) -> String {
    "| "
      + (0..<columns).map { column in
        let cell = column < cells.count ? cells[column] : ""
        return cell + String(repeating: " ", count: widths[column] - cell.count)
      }.joined(separator: " | ") + " |"
  }
  let rule = "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"
  return ([render(rows[0]), rule] + rows.dropFirst().map(render)).joined(separator: "\n") + "\n"
}
