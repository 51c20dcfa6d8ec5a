import Datastore
import Forum

/// `index add CLASS FIELD [FIELD…]`: the board's owner indexes fields an app queries, so that
/// its `where` on them (equalities, then its order) seeks an index instead of walking the class.
/// On SQLite the index holds the class's public rows (an app user's private rows are found from
/// the reader, issue 28); on PostgreSQL it is made by the database owner, as `forum init` is.
/// `index geo CLASS FIELD`: the coordinates of the app's GeoPoint field, for `$within`/`$box` and
/// `$nearSphere` with a distance.
enum IndexCommand: BoardlessCommand {
  static let name = "index"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "the board's owner indexes fields an app queries (index add CLASS FIELD…, index geo CLASS FIELD)",
      "アプリが検索するフィールドに所有者が索引を作る (index add CLASS FIELD…, index geo CLASS FIELD)"),
    details: Localized(
      "Fields in the order the query uses them: equalities first, then the order, e.g. "
        + "`forum index add Comment thread createDate`. `forum index geo Spot location` indexes "
        + "a GeoPoint field for $within and $nearSphere. Idempotent; the board's own listings are "
        + "indexed already.",
      "クエリが使う順に指定します (等号が先、次に並び順)。例: "
        + "`forum index add Comment thread createDate`。`forum index geo Spot location` は "
        + "GeoPoint のフィールドを $within と $nearSphere のために索引します。何度実行しても同じです。"),
    parameters: [db, action, className, fields])

  enum Action: String, CaseIterable, ArgumentValue {
    case add, geo
    static var valueName: String { "add|geo" }
    static var completion: Completion { .words(allCases.map(\.rawValue)) }
    init(parsing word: String, messages: Messages) throws {
      guard let action = Action(rawValue: word) else { throw CLIError.usage(IndexCommand.usage) }
      self = action
    }
  }

  static let usage = "usage: forum index add CLASS FIELD [FIELD…] | forum index geo CLASS FIELD"
  static let db = databaseOption
  static let action = Argument<Action>()
  static let className = Argument<String>("CLASS")
  static let fields = Argument<String>("FIELD", maximum: 4)

  static func run(_ invocation: Invocation, options: GlobalOptions, messages: Messages) throws
    -> Int32
  {
    let fieldNames = invocation.all(fields)
    guard let name = invocation[className], !fieldNames.isEmpty else {
      throw CLIError.usage(usage)
    }
    let isGeo = invocation[action] == .geo
    guard !isGeo || fieldNames.count == 1 else { throw CLIError.usage(usage) }
    let spec =
      isGeo
      ? IndexSpec(geoOf: name, field: fieldNames[0])
      : IndexSpec(className: name, fields: fieldNames)
    try Datastore.addIndex(spec, at: boardsHostLocation(invocation[db], options: options))
    if options.json || invocation[GlobalOptions.jsonFlag] {
      var fields: [String: JSONValue] = [
        "className": .string(name), "fields": .array(fieldNames.map(JSONValue.string)),
      ]
      if isGeo { fields["kind"] = .string("geo") }
      let json: JSONValue = .object(fields)
      print(json.jsonText())
    } else {
      print("indexed \(name): \(fieldNames.joined(separator: ", "))\(isGeo ? " (GeoPoint)" : "")")
    }
    return 0
  }
}
