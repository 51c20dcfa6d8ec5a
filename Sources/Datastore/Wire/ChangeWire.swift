/// The change feed on the wire (`GET /2013-09-01/forum/changes`, and each event of
/// `/2013-09-01/forum/feed`): one definition that the server encodes with and forum's remote
/// engine decodes with, so the two cannot drift.
///
///     {"changes":[{"sequence":7,"className":"Comment","objectId":"…","kind":"created",
///                  "parentId":"…","number":3}],
///      "next":7,"hasMore":false,"missed":false}
///
/// `parentId` and `number` are left out when absent. Decoding trusts nothing: the server may be
/// hostile or broken, so a wrong type, a value out of range, a name no object may have, more
/// changes than asked for or sequences out of order is a `ChangeWire.Malformed` naming the
/// field, never a crash, a silent default or a string that could reach a terminal unchecked.
public enum ChangeWire {
  /// The most bytes a batch's JSON may have when decoded: a full batch of `Query.maximumLimit`
  /// changes with the longest names is far below it.
  public static let maximumBatchBytes = 1 << 20

  /// A feed answer that is not what the protocol says, with the field that broke it.
  public struct Malformed: Error, Equatable, CustomStringConvertible, Sendable {
    public let field: String
    public let why: String
    public var description: String { "the server's change feed is malformed: \(field) \(why)" }
  }

  /// The kind as the wire names it.
  public static func name(of kind: Change.Kind) -> String {
    switch kind {
    case .created: "created"
    case .updated: "updated"
    case .deleted: "deleted"
    }
  }

  public static func kind(named name: String) -> Change.Kind? {
    switch name {
    case "created": .created
    case "updated": .updated
    case "deleted": .deleted
    default: nil
    }
  }

  // MARK: Encoding

  public static func json(_ change: Change) -> JSONValue {
    var fields: [String: JSONValue] = [
      "sequence": .int(change.sequence), "className": .string(change.className),
      "objectId": .string(change.objectId), "kind": .string(name(of: change.kind)),
    ]
    if let parentId = change.parentId { fields["parentId"] = .string(parentId) }
    if let number = change.number { fields["number"] = .int(number) }
    return .object(fields)
  }

  public static func json(_ batch: ChangeBatch) -> JSONValue {
    .object([
      "changes": .array(batch.changes.map(json)), "next": .int(batch.next),
      "hasMore": .bool(batch.hasMore), "missed": .bool(batch.missed),
    ])
  }

  public static func bytes(_ batch: ChangeBatch) -> [UInt8] { json(batch).jsonBytes() }

  // MARK: Decoding

  /// A batch read as an answer to `changes(since: since, limit: limit)`: at most `limit`
  /// changes, each after `since` and after the one before it, `next` not behind them.
  public static func batch(_ bytes: [UInt8], since: Int64, limit: Int) throws -> ChangeBatch {
    guard bytes.count <= maximumBatchBytes else {
      throw Malformed(field: "the answer", why: "is over \(maximumBatchBytes) bytes")
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw Malformed(field: "the answer", why: "is not UTF-8")
    }
    guard let value = try? JSONValue.parse(text) else {
      throw Malformed(field: "the answer", why: "is not JSON")
    }
    return try batch(value, since: since, limit: limit)
  }

  public static func batch(_ value: JSONValue, since: Int64, limit: Int) throws -> ChangeBatch {
    guard case .object(let fields) = value else {
      throw Malformed(field: "the answer", why: "is not an object")
    }
    guard case .array(let items)? = fields["changes"] else {
      throw Malformed(field: "changes", why: "is not an array")
    }
    guard items.count <= max(0, limit) else {
      throw Malformed(field: "changes", why: "holds \(items.count), more than the \(limit) asked")
    }
    var changes: [Change] = []
    changes.reserveCapacity(items.count)
    var last = since
    for (index, item) in items.enumerated() {
      let change = try self.change(item, field: "changes[\(index)]")
      guard change.sequence > last else {
        throw Malformed(
          field: "changes[\(index)].sequence", why: "is not after \(last) (out of order)")
      }
      last = change.sequence
      changes.append(change)
    }
    let next = try integer(fields["next"], field: "next")
    guard next >= last else {
      throw Malformed(field: "next", why: "is behind the changes it ends (\(last))")
    }
    let hasMore = try boolean(fields["hasMore"], field: "hasMore")
    let missed = try boolean(fields["missed"], field: "missed")
    return ChangeBatch(changes: changes, next: next, hasMore: hasMore, missed: missed)
  }

  /// One change, as a feed event carries it.
  public static func change(_ bytes: [UInt8]) throws -> Change {
    guard bytes.count <= 64 * 1024, let text = String(validating: bytes, as: UTF8.self),
      let value = try? JSONValue.parse(text)
    else { throw Malformed(field: "the event", why: "is not a JSON change") }
    return try change(value, field: "the event")
  }

  public static func change(_ value: JSONValue, field: String) throws -> Change {
    guard case .object(let fields) = value else {
      throw Malformed(field: field, why: "is not an object")
    }
    let sequence = try integer(fields["sequence"], field: field + ".sequence")
    guard sequence > 0 else { throw Malformed(field: field + ".sequence", why: "is not above 0") }
    guard case .string(let className)? = fields["className"], Validation.isName(className) else {
      throw Malformed(field: field + ".className", why: "is not a class name")
    }
    let objectId = try identifier(fields["objectId"], field: field + ".objectId")
    guard case .string(let kindName)? = fields["kind"], let kind = kind(named: kindName) else {
      throw Malformed(field: field + ".kind", why: "is not created, updated or deleted")
    }
    var parentId: String?
    if let value = fields["parentId"], value != .null {
      parentId = try identifier(value, field: field + ".parentId")
    }
    var number: Int64?
    if let value = fields["number"], value != .null {
      number = try integer(value, field: field + ".number")
    }
    return Change(
      sequence: sequence, className: className, objectId: objectId, kind: kind,
      parentId: parentId, number: number)
  }

  /// A sequence, a cursor or a number: an integer in 0…2^63−1 written as one (not `1.0`, not a
  /// string), so nothing is rounded or wrapped.
  private static func integer(_ value: JSONValue?, field: String) throws -> Int64 {
    guard case .int(let number)? = value else {
      throw Malformed(field: field, why: "is not an integer")
    }
    guard number >= 0 else { throw Malformed(field: field, why: "is negative") }
    return number
  }

  private static func boolean(_ value: JSONValue?, field: String) throws -> Bool {
    guard case .bool(let flag)? = value else {
      throw Malformed(field: field, why: "is not a boolean")
    }
    return flag
  }

  /// An object id: 1 to 64 letters, digits, `_` or `-` (the engine's own are 16 alphanumerics;
  /// an imported board may keep others), so no control byte or escape reaches a screen.
  private static func identifier(_ value: JSONValue?, field: String) throws -> String {
    guard case .string(let text)? = value, (1...64).contains(text.utf8.count),
      text.utf8.allSatisfy({ byte in
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte)
          || (0x61...0x7A).contains(byte) || byte == 0x5F || byte == 0x2D
      })
    else { throw Malformed(field: field, why: "is not an object id") }
    return text
  }
}
