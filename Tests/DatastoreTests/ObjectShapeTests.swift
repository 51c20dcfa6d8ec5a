import Testing

@testable import Datastore

/// `ObjectShape.write` appends an object's JSON without building it; it must give exactly
/// `json(object).jsonBytes()`, and `json` exactly what the board and the server built before
/// the shape was declared (the reference below), for objects of every kind a find returns:
/// the board's classes and an app's, users, included objects (users among them), damaged rows,
/// dates, the engine's bookkeeping, relations in fields and in included objects, keys that
/// collide with the ones the shape adds, keys and principals outside ASCII.
@Suite("Object shape")
struct ObjectShapeTests {
  static let board = ObjectShape(
    classes: [
      "Thread": .init(
        dateFields: ["lastActivity", "editDate", "pinnedDate"], hiddenFields: ["lastCommentNumber"]),
      "Comment": .init(dateFields: ["editDate"], hiddenFields: ["lastCommentNumber"]),
    ], damagedKeeps: ["number"])

  // MARK: The shapes as they were written before (`Board.restObject`, `NCMBJSON.object`)

  static func referenceRest(_ object: DataObject, _ shape: ObjectShape) -> JSONValue {
    if object.isDamaged, let kept = shape.damagedKeeps {
      var plain = DataObject(
        className: object.className, objectId: object.objectId, createDate: object.createDate,
        updateDate: object.updateDate, acl: object.acl, fields: [:])
      plain.isDamaged = true
      guard case .object(var fields) = plain.json else { return plain.json }
      for name in kept {
        if case .int(let number)? = object[name] { fields[name] = .int(number) }
      }
      fields["damaged"] = .bool(true)
      return .object(fields)
    }
    var plain = object
    plain.included = [:]
    guard case .object(var fields) = plain.json else { return plain.json }
    if let declared = shape.classes[object.className] {
      for name in declared.dateFields {
        if case .int(let milliseconds)? = fields[name] {
          fields[name] = .object([
            "__type": .string("Date"),
            "iso": .string(BackendDate.string(milliseconds: milliseconds)),
          ])
        }
      }
      for name in declared.hiddenFields { fields[name] = nil }
    }
    for (key, included) in object.included {
      var nested = referenceRest(included, shape).objectValue ?? [:]
      nested["__type"] = .string("Object")
      nested["className"] = .string(included.className)
      fields[key] = .object(nested)
    }
    return .object(fields)
  }

  static func referenceForApps(_ object: DataObject, _ shape: ObjectShape) -> JSONValue {
    let json = referenceRest(object, shape)
    guard var fields = json.objectValue else { return json }
    if object.className == User.className { fields["authData"] = nil }
    for (key, included) in object.included where included.className == User.className {
      if var nested = fields[key]?.objectValue {
        nested["authData"] = nil
        fields[key] = .object(nested)
      }
    }
    return .object(referenceHiding(fields, depth: 3))
  }

  static func referenceHiding(_ fields: [String: JSONValue], depth: Int) -> [String: JSONValue] {
    var fields = fields
    for (key, value) in fields {
      guard case .object(var nested) = value else { continue }
      if nested["__type"] == .string("Relation") {
        nested["objects"] = nil
        fields[key] = .object(nested)
      } else if depth > 0, nested["__type"] == .string("Object") {
        fields[key] = .object(referenceHiding(nested, depth: depth - 1))
      }
    }
    return fields
  }

  // MARK: Objects

  /// A seeded generator, so that a failure can be run again.
  struct Generator {
    var state: UInt64

    mutating func next(_ bound: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(bound))
    }

    mutating func pick<T>(_ values: [T]) -> T { values[next(values.count)] }

    static let keys = [
      "text", "number", "lastActivity", "editDate", "pinnedDate", "lastCommentNumber", "thread",
      "objectId", "acl", "createDate", "updateDate", "authData", "__type", "className", "damaged",
      "author", "é", "ｽﾚ", "z\u{202E}", "tags", "members",
    ]

    mutating func value(depth: Int) -> JSONValue {
      switch next(depth > 2 ? 6 : 10) {
      case 0: return .null
      case 1: return .bool(next(2) == 0)
      case 2: return .int(Int64(next(4_000_000_000)) * 1000 + Int64(next(1000)))
      case 3: return .double(Double(next(1000)) / 7)
      case 4: return .string(pick(["hi", "a\"b\\c", "日本語", "\u{0007}bell", "", "line\nbreak"]))
      case 5: return .int(Int64(next(100)))
      case 6: return .array((0..<next(4)).map { _ in value(depth: depth + 1) })
      case 7:
        return .object([
          "__type": .string("Relation"), "className": .string("Note"),
          "objects": .array([.string("x"), .string("y")]),
        ])
      case 8:
        var fields = self.fields(depth: depth + 1)
        fields["__type"] = .string("Object")
        return .object(fields)
      default: return .object(fields(depth: depth + 1))
      }
    }

    mutating func fields(depth: Int) -> [String: JSONValue] {
      var fields: [String: JSONValue] = [:]
      for _ in 0..<next(7) { fields[pick(Generator.keys)] = value(depth: depth) }
      return fields
    }

    mutating func acl() -> ACL {
      var acl = ACL()
      for _ in 0..<next(4) {
        let principal = pick(["*", "role:mods", "u1", "u2", "ü3"])
        acl.grant(read: next(2) == 0, write: next(2) == 0, to: principal)
      }
      return acl
    }

    mutating func object(depth: Int = 0) -> DataObject {
      var object = DataObject(
        className: pick(["Thread", "Comment", User.className, "Note"]),
        objectId: "id\(next(1000))", createDate: Int64(next(2_000_000_000)) * 1000,
        updateDate: Int64(next(2_000_000_000)) * 1000 + 7, acl: acl(), fields: fields(depth: 0))
      object.isDamaged = next(8) == 0
      if depth < 2 {
        for _ in 0..<next(3) {
          object.included[pick(Generator.keys)] = self.object(depth: depth + 1)
        }
      }
      return object
    }
  }

  @Test(arguments: [UInt64(1), 2, 3, 4])
  func writtenBytesAreTheValuesAndTheValueIsAsBefore(seed: UInt64) {
    var generator = Generator(state: seed)
    for _ in 0..<2_000 {
      let object = generator.object()
      for shape in [ObjectShape.datastore, ObjectShapeTests.board] {
        let reference = ObjectShapeTests.referenceRest(object, shape)
        #expect(shape.json(object) == reference)
        var written: [UInt8] = []
        shape.write(object, to: &written)
        #expect(String(decoding: written, as: UTF8.self) == reference.jsonText())

        let forApps = ObjectShapeTests.referenceForApps(object, shape)
        #expect(shape.forApps.json(object) == forApps)
        var writtenForApps: [UInt8] = []
        shape.forApps.write(object, to: &writtenForApps)
        #expect(String(decoding: writtenForApps, as: UTF8.self) == forApps.jsonText())
      }
    }
  }

  @Test func aBoardObjectReadsWithNCMBDatesAndWithoutItsBookkeeping() {
    let object = DataObject(
      className: "Thread", objectId: "t1", createDate: 0, updateDate: 1_000,
      acl: .publicRead(owner: "u1"),
      fields: [
        "lastActivity": .int(86_400_000), "lastCommentNumber": .int(3), "title": .string("hi"),
      ])
    var written: [UInt8] = []
    ObjectShapeTests.board.write(object, to: &written)
    #expect(
      String(decoding: written, as: UTF8.self)
        == #"{"acl":{"*":{"read":true},"u1":{"read":true,"write":true}},"#
        + #""createDate":"1970-01-01T00:00:00.000Z","lastActivity":{"__type":"Date","#
        + #""iso":"1970-01-02T00:00:00.000Z"},"objectId":"t1","title":"hi","#
        + #""updateDate":"1970-01-01T00:00:01.000Z"}"#)
  }
}

/// `JSONValue.readingCost` steps over strings with `memchr`; it must count what a reader going
/// byte by byte counts (the reference below, as it was written first), on any text a row may
/// hold: JSON, damaged JSON, runs of backslashes before quotes, strings left open.
@Suite("Reading cost")
struct ReadingCostTests {
  static func reference(_ text: String) -> Int {
    var nodes = 0
    var inString = false
    var escaped = false
    for byte in text.utf8 {
      if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
        continue
      }
      switch byte {
      case UInt8(ascii: "\""): inString = true
      case UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: ","): nodes += 1
      default: break
      }
    }
    return text.utf8.count + nodes * JSONValue.nodeCost
  }

  @Test func theCostIsTheByteByByteCount() {
    var generator = ObjectShapeTests.Generator(state: 29)
    let pieces = ["\"", "\\", "[", "{", ",", "a", "日", "]", "}", ":", "\\\"", "\\\\"]
    var texts = ["", "\"", "\\", "\"\\", "[\"\\\\\"],[", "\"abc", "{\"a\":\"b\\\"c\",\"d\":[1,2]}"]
    for _ in 0..<20_000 {
      texts.append((0..<generator.next(24)).map { _ in generator.pick(pieces) }.joined())
    }
    for _ in 0..<500 { texts.append(JSONValue.object(generator.fields(depth: 0)).jsonText()) }
    for text in texts {
      #expect(JSONValue.readingCost(text) == ReadingCostTests.reference(text), "\(text)")
    }
  }
}
