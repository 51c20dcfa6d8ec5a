/// `WriteOutcome` on the wire: what each step of a performed operation found and made.
extension WriteOutcome {
  public var wire: JSONValue {
    var body: [String: JSONValue] = ["results": .array(results.map(\.wire))]
    if let stoppedAt { body["stoppedAt"] = .int(Int64(stoppedAt)) }
    return .object(body)
  }

  public init(wire value: JSONValue) throws {
    let object = try WireObject(value, "outcome")
    self.init(
      results: try object.array("results").map(Result.init(wire:)),
      stoppedAt: try object.optionalInt("stoppedAt").map {
        guard $0 >= 0, $0 <= Int64(WriteOperation.maximumSteps) else {
          throw Wire.malformed("stoppedAt")
        }
        return Int($0)
      })
  }
}

extension WriteOutcome.Result {
  var wire: JSONValue {
    switch self {
    case .none: .object([:])
    case .objects(let objects): .object(["objects": .array(objects.map(\.wire))])
    case .file(let file): .object(["file": file.wire])
    case .removed(let removal):
      .object(["removed": .string(removal == .deleted ? "deleted" : "takenDown")])
    }
  }

  init(wire value: JSONValue) throws {
    let object = try WireObject(value, "result")
    if object["objects"] != nil {
      self = .objects(try object.array("objects").map(DataObject.init(wire:)))
    } else if let file = object["file"] {
      self = .file(try FileInfo(wire: file))
    } else if object["removed"] != nil {
      switch try object.string("removed") {
      case "deleted": self = .removed(.deleted)
      case "takenDown": self = .removed(.takenDown)
      default: throw Wire.malformed("removed")
      }
    } else {
      self = .none
    }
  }
}
