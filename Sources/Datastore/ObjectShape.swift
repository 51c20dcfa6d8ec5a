/// How an application's objects read as JSON: the datastore's REST shape (the fields, then
/// `objectId`, `createDate`, `updateDate`, `acl` and the objects a find included) with what
/// the application declares of its classes. Declared once, rendered two ways that give the same
/// bytes: `json` builds the value (`forum --json`, a test's reference), `write` appends its
/// compact text straight from the object, building no dictionary (every object a server lists).
public struct ObjectShape: Sendable {
  /// What a class declares of its fields.
  public struct ClassShape: Sendable {
    /// Fields stored as milliseconds, read as NCMB's Dates (`{"__type":"Date","iso":…}`).
    public var dateFields: [String]
    /// The engine's bookkeeping, left out.
    public var hiddenFields: [String]

    public init(dateFields: [String] = [], hiddenFields: [String] = []) {
      self.dateFields = dateFields
      self.hiddenFields = hiddenFields
    }
  }

  public var classes: [String: ClassShape]
  /// A row whose fields could not be read is its id, dates and ACL, these whole-number fields
  /// when read, and `"damaged": true` (nil: its fields as salvaged, in the datastore's shape).
  public var damagedKeeps: [String]?
  /// As NCMB answered an app: a user's `authData` (its own and an included user's) left out,
  /// and a relation's members (`objects`) too, in the object and in what it includes, three
  /// levels down; they are found with `$relatedTo`.
  public var hidesFromApps = false

  public init(classes: [String: ClassShape] = [:], damagedKeeps: [String]? = nil) {
    self.classes = classes
    self.damagedKeeps = damagedKeeps
  }

  /// The datastore's own shape: `DataObject.json`, but for an included object named as one of
  /// the fields the datastore adds (`objectId`, `acl`, … : a name the API refuses to store),
  /// which is written over it as in every shape.
  public static let datastore = ObjectShape()

  /// The same shape as an app is answered (`hidesFromApps`).
  public var forApps: ObjectShape {
    var shape = self
    shape.hidesFromApps = true
    return shape
  }

  /// What the datastore adds to every object, over a field of the same name.
  static let systemKeys = ["objectId", "createDate", "updateDate", "acl"]

  /// Levels of included objects whose relations are hidden, as `hidesFromApps` says.
  static let hiddenRelationDepth = 3
}

// MARK: - The value

extension ObjectShape {
  /// The object as a JSON value.
  public func json(_ object: DataObject) -> JSONValue {
    var fields = shaped(object)
    if hidesFromApps {
      if object.className == User.className { fields["authData"] = nil }
      for (key, included) in object.included where included.className == User.className {
        if var nested = fields[key]?.objectValue {
          nested["authData"] = nil
          fields[key] = .object(nested)
        }
      }
      fields = ObjectShape.hidingRelationMembers(fields, depth: ObjectShape.hiddenRelationDepth)
    }
    return .object(fields)
  }

  private func shaped(_ object: DataObject) -> [String: JSONValue] {
    if object.isDamaged, let kept = damagedKeeps {
      let plain = DataObject(
        className: object.className, objectId: object.objectId, createDate: object.createDate,
        updateDate: object.updateDate, acl: object.acl, fields: [:])
      var fields = plain.json.objectValue ?? [:]
      for name in kept {
        if case .int(let number)? = object[name] { fields[name] = .int(number) }
      }
      fields["damaged"] = .bool(true)
      return fields
    }
    var plain = object
    plain.included = [:]
    var fields = plain.json.objectValue ?? [:]
    if let declared = classes[object.className] {
      for name in declared.dateFields {
        if case .int(let milliseconds)? = fields[name] {
          fields[name] = ObjectShape.dateJSON(milliseconds)
        }
      }
      for name in declared.hiddenFields { fields[name] = nil }
    }
    for (key, included) in object.included {
      var nested = shaped(included)
      nested["__type"] = .string("Object")
      nested["className"] = .string(included.className)
      fields[key] = .object(nested)
    }
    return fields
  }

  /// NCMB's Date: `{"__type":"Date","iso":"…Z"}`.
  public static func dateJSON(_ milliseconds: Int64) -> JSONValue {
    .object([
      "__type": .string("Date"), "iso": .string(BackendDate.string(milliseconds: milliseconds)),
    ])
  }

  static func hidingRelationMembers(_ fields: [String: JSONValue], depth: Int)
    -> [String: JSONValue]
  {
    var fields = fields
    for (key, value) in fields {
      guard case .object(var nested) = value else { continue }
      if nested["__type"] == .string("Relation") {
        nested["objects"] = nil
        fields[key] = .object(nested)
      } else if depth > 0, nested["__type"] == .string("Object") {
        fields[key] = .object(hidingRelationMembers(nested, depth: depth - 1))
      }
    }
    return fields
  }
}

// MARK: - The bytes

extension ObjectShape {
  /// `json(object).jsonBytes()`, appended to `out` without building it.
  public func write(_ object: DataObject, to out: inout [UInt8]) {
    writeObject(
      object, hiding: hidesFromApps ? ObjectShape.hiddenRelationDepth : nil,
      dropsAuthData: hidesFromApps && object.className == User.className, included: false,
      to: &out)
  }

  /// `objects` written one after another, comma-separated; their ids, in order.
  public func write(_ objects: [DataObject], to out: inout [UInt8]) -> [String] {
    for (index, object) in objects.enumerated() {
      if index > 0 { out.append(UInt8(ascii: ",")) }
      write(object, to: &out)
    }
    return objects.map(\.objectId)
  }

  /// One member of an object being written: where its value comes from.
  private enum Member {
    case value(JSONValue)
    case text(String)
    case date(Int64)
    case acl(ACL)
    case included(DataObject)
    case boolean(Bool)
  }

  /// `hiding`: the levels of relation hiding left (nil: none); `included`: written as an
  /// included object (`__type` and `className` added).
  private func writeObject(
    _ object: DataObject, hiding: Int?, dropsAuthData: Bool, included: Bool,
    to out: inout [UInt8]
  ) {
    var members: [(key: String, member: Member)] = []
    members.reserveCapacity(object.fields.count + object.included.count + 6)
    let system = ObjectShape.systemKeys
    let includes = !object.included.isEmpty
    if object.isDamaged, let kept = damagedKeeps {
      for name in kept {
        if case .int(let number)? = object[name] { members.append((name, .value(.int(number)))) }
      }
      members.append(("damaged", .boolean(true)))
    } else {
      let declared = classes[object.className]
      for (key, value) in object.fields {
        switch key {
        case "objectId", "createDate", "updateDate", "acl": continue
        default: if includes && object.included[key] != nil { continue }
        }
        if let declared {
          if declared.hiddenFields.contains(key) { continue }
          if case .int(let milliseconds) = value, declared.dateFields.contains(key) {
            members.append((key, .date(milliseconds)))
            continue
          }
        }
        members.append((key, .value(value)))
      }
      for (key, target) in object.included { members.append((key, .included(target))) }
    }
    if dropsAuthData { members.removeAll { $0.key == "authData" } }
    if included {
      members.removeAll { $0.key == "__type" || $0.key == "className" }
      members.append(("__type", .text("Object")))
      members.append(("className", .text(object.className)))
    }
    // An included object is written over a datastore field of its key, as `json` sets it last.
    let plain = object.isDamaged && damagedKeeps != nil
    let hidden = plain ? [] : classes[object.className]?.hiddenFields ?? []
    for key in system
    where plain || ((!includes || object.included[key] == nil) && !hidden.contains(key)) {
      switch key {
      case "objectId": members.append((key, .text(object.objectId)))
      case "createDate":
        members.append((key, .text(BackendDate.string(milliseconds: object.createDate))))
      case "updateDate":
        members.append((key, .text(BackendDate.string(milliseconds: object.updateDate))))
      default: members.append((key, .acl(object.acl)))
      }
    }
    members.sort { $0.key < $1.key }

    out.append(UInt8(ascii: "{"))
    for (index, (key, member)) in members.enumerated() {
      if index > 0 { out.append(UInt8(ascii: ",")) }
      JSONValue.writeString(key, to: &out)
      out.append(UInt8(ascii: ":"))
      switch member {
      case .value(let value): ObjectShape.write(value, hiding: hiding, to: &out)
      case .text(let text): JSONValue.writeString(text, to: &out)
      case .boolean(let value): JSONValue.bool(value).write(to: &out)
      case .date(let milliseconds):
        out.append(contentsOf: #"{"__type":"Date","iso":""#.utf8)
        out.append(contentsOf: BackendDate.string(milliseconds: milliseconds).utf8)
        out.append(contentsOf: #""}"#.utf8)
      case .acl(let acl): ObjectShape.write(acl, to: &out)
      case .included(let target):
        // As `json`: an included user's `authData` goes one level down only, and relations are
        // hidden inside an included object only while levels are left.
        writeObject(
          target, hiding: hiding.flatMap { $0 > 0 ? $0 - 1 : nil },
          dropsAuthData: hiding != nil && !included && target.className == User.className,
          included: true, to: &out)
      }
    }
    out.append(UInt8(ascii: "}"))
  }

  /// A stored value; with `hiding`, as `hidingRelationMembers` leaves a member of an object.
  private static func write(_ value: JSONValue, hiding: Int?, to out: inout [UInt8]) {
    guard let hiding, case .object(let nested) = value else {
      value.write(to: &out)
      return
    }
    let type = nested["__type"]
    if type == .string("Relation") {
      var kept = nested
      kept["objects"] = nil
      JSONValue.object(kept).write(to: &out)
    } else if hiding > 0, type == .string("Object") {
      out.append(UInt8(ascii: "{"))
      for (index, (key, member)) in nested.sorted(by: { $0.key < $1.key }).enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        JSONValue.writeString(key, to: &out)
        out.append(UInt8(ascii: ":"))
        write(member, hiding: hiding - 1, to: &out)
      }
      out.append(UInt8(ascii: "}"))
    } else {
      value.write(to: &out)
    }
  }

  /// `acl.json`'s text: each principal, sorted, with its granted flags.
  static func write(_ acl: ACL, to out: inout [UInt8]) {
    var entries: [(principal: String, reads: Bool, writes: Bool)] = []
    entries.reserveCapacity(acl.readers.count + acl.writers.count)
    for reader in acl.readers { entries.append((reader, true, acl.writers.contains(reader))) }
    for writer in acl.writers where !acl.readers.contains(writer) {
      entries.append((writer, false, true))
    }
    entries.sort { $0.principal < $1.principal }
    out.append(UInt8(ascii: "{"))
    for (index, entry) in entries.enumerated() {
      if index > 0 { out.append(UInt8(ascii: ",")) }
      JSONValue.writeString(entry.principal, to: &out)
      switch (entry.reads, entry.writes) {
      case (true, true): out.append(contentsOf: #":{"read":true,"write":true}"#.utf8)
      case (true, false): out.append(contentsOf: #":{"read":true}"#.utf8)
      default: out.append(contentsOf: #":{"write":true}"#.utf8)
      }
    }
    out.append(UInt8(ascii: "}"))
  }
}
