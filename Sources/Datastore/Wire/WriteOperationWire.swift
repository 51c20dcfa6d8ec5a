import ForumCrypto

/// `WriteOperation` on the wire: the remote engine sends a board's write as one request
/// (`POST /2013-09-01/forum/perform`), which the server runs whole as the request's user.
extension WriteOperation {
  public var wire: JSONValue { .object(["steps": .array(steps.map(\.wire))]) }

  /// Steps one operation may have (the board's longest has about ten).
  public static let maximumSteps = 64

  public init(wire value: JSONValue) throws {
    let steps = try WireObject(value, "operation").array("steps")
    guard steps.count <= WriteOperation.maximumSteps else { throw Wire.malformed("steps") }
    self.init(try steps.map(WriteStep.init(wire:)))
  }
}

extension Operand {
  var wire: JSONValue {
    switch self {
    case .value(let value): .object(["value": value])
    case .caller: .object(["caller": .bool(true)])
    case .pointer(let step): .object(["pointerTo": .int(Int64(step))])
    case .field(let name, let step): .object(["field": .string(name), "of": .int(Int64(step))])
    case .now: .object(["now": .bool(true)])
    }
  }

  init(wire value: JSONValue) throws {
    let object = try WireObject(value, "operand")
    if let given = object["value"] {
      self = .value(given)
    } else if object["caller"] != nil {
      self = .caller
    } else if object["pointerTo"] != nil {
      self = .pointer(toStep: try object.count("pointerTo"))
    } else if object["field"] != nil {
      self = .field(try object.string("field"), ofStep: try object.count("of"))
    } else if object["now"] != nil {
      self = .now
    } else {
      throw Wire.malformed("operand")
    }
  }
}

extension [String: Operand] {
  var wire: JSONValue { .object(mapValues(\.wire)) }

  init(wire value: JSONValue?) throws {
    guard case .object(let fields)? = value else { throw Wire.malformed("operands") }
    self = try fields.mapValues(Operand.init(wire:))
  }
}

extension WriteStep {
  var wire: JSONValue {
    switch self {
    case .find(let className, let equalTo):
      .object(["find": .string(className), "equalTo": equalTo.wire])
    case .findAll(let className, let equalTo):
      .object(["findAll": .string(className), "equalTo": equalTo.wire])
    case .stopIf(let step, let field, let value):
      .object(["stopIf": .int(Int64(step)), "field": .string(field), "equals": value])
    case .putFile(let name, let bytes, let mimeType, let acl):
      .object([
        "putFile": .string(name), "bytes": .string(Crypto.base64(bytes)),
        "mimeType": .string(mimeType), "acl": acl.json,
      ])
    case .create(let className, let fields, let acl):
      .object(["create": .string(className), "fields": fields.wire, "acl": acl.json])
    case .update(let step, let set): .object(["update": .int(Int64(step)), "set": set.wire])
    case .keepOne(let step, let className, let set, let create, let acl):
      .object([
        "keepOne": .int(Int64(step)), "className": .string(className), "set": set.wire,
        "create": create.wire, "acl": acl.json,
      ])
    case .deleteFound(let step, let whereIn):
      .object([
        "deleteFound": .int(Int64(step)), "whereIn": .object(whereIn.mapValues(JSONValue.array)),
      ])
    case .requireEditable(let step): .object(["requireEditable": .int(Int64(step))])
    case .remove(let step): .object(["remove": .int(Int64(step))])
    case .markRead(let step, let upTo):
      .object(["markRead": .int(Int64(step)), "upTo": .int(upTo)])
    case .advanceRead(let parentStep, let childStep):
      .object(["advanceRead": .int(Int64(parentStep)), "child": .int(Int64(childStep))])
    }
  }

  init(wire value: JSONValue) throws {
    let step = try WireObject(value, "step")
    if step["find"] != nil {
      self = .find(className: try step.string("find"), equalTo: try .init(wire: step["equalTo"]))
    } else if step["findAll"] != nil {
      self = .findAll(
        className: try step.string("findAll"), equalTo: try .init(wire: step["equalTo"]))
    } else if step["stopIf"] != nil {
      guard let value = step["equals"] else { throw Wire.malformed("step.equals") }
      self = .stopIf(step: try step.count("stopIf"), field: try step.string("field"), equals: value)
    } else if step["putFile"] != nil {
      guard let bytes = Crypto.base64Decode(try step.string("bytes")) else {
        throw Wire.malformed("step.bytes")
      }
      self = .putFile(
        name: try step.string("putFile"), bytes: bytes, mimeType: try step.string("mimeType"),
        acl: try ACL(json: step["acl"] ?? .null))
    } else if step["keepOne"] != nil {
      // Before `create`: a keepOne step has a `create` key of its own (the fields it makes).
      self = .keepOne(
        step: try step.count("keepOne"), className: try step.string("className"),
        set: try .init(wire: step["set"]), create: try .init(wire: step["create"]),
        acl: try ACL(json: step["acl"] ?? .null))
    } else if step["create"] != nil {
      self = .create(
        className: try step.string("create"), fields: try .init(wire: step["fields"]),
        acl: try ACL(json: step["acl"] ?? .null))
    } else if step["update"] != nil {
      self = .update(step: try step.count("update"), set: try .init(wire: step["set"]))
    } else if step["deleteFound"] != nil {
      let whereIn = try step.object("whereIn").mapValues {
        guard case .array(let values) = $0 else { throw Wire.malformed("step.whereIn") }
        return values
      }
      self = .deleteFound(step: try step.count("deleteFound"), whereIn: whereIn)
    } else if step["requireEditable"] != nil {
      self = .requireEditable(step: try step.count("requireEditable"))
    } else if step["remove"] != nil {
      self = .remove(step: try step.count("remove"))
    } else if step["markRead"] != nil {
      self = .markRead(step: try step.count("markRead"), upTo: try step.int("upTo"))
    } else if step["advanceRead"] != nil {
      self = .advanceRead(
        parentStep: try step.count("advanceRead"), childStep: try step.count("child"))
    } else {
      throw Wire.malformed("step")
    }
  }
}
