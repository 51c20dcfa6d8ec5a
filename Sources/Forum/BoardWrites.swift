import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Every write of the board that takes more than one step, each one `WriteOperation` beside the
/// rules (`Board.rules`): the engine runs it whole, in one transaction of its own (or one
/// request across the network), with its own clock. Which step failed says which refusal it is
/// (`Board.perform`).
enum BoardWrites {
  /// A thread, its image stored with it, and its author's read mark (you have read your own
  /// thread: nothing in it is new to you until others comment). The thread is step
  /// `steps.count - 2`.
  static func newThread(
    title: String, description: String, image: PreparedImage?, author userId: String
  ) -> WriteOperation {
    let acl = ACL.publicRead(owner: userId)
    var fields: [String: Operand] = [
      "title": .value(.string(title)), "description": .value(.string(description)),
    ]
    var steps: [WriteStep] = []
    if let image {
      let fileName = "thread-\(UUID().uuidString.lowercased()).\(image.format.fileExtension)"
      steps.append(
        .putFile(
          name: fileName, bytes: [UInt8](image.data), mimeType: image.format.mimeType, acl: acl))
      fields["fileName"] = .value(.string(fileName))
      fields["image"] = .value(ImageSummary(fileName: fileName, image: image).json)
    }
    steps.append(.create(className: Board.threadClass, fields: fields, acl: acl))
    steps.append(.markRead(step: steps.count - 1, upTo: 0))
    return WriteOperation(steps)
  }

  /// A comment in thread `threadNumber` (step 0), answering comment `replyTo` of it (step 1),
  /// and its author's read mark moved past it when they had read the thread up to it. The
  /// comment is step `steps.count - 2`.
  static func comment(threadNumber: Int, text: String, replyTo: Int?, author userId: String)
    -> WriteOperation
  {
    var steps = [thread(threadNumber)]
    var fields: [String: Operand] = [
      "text": .value(.string(text)), "thread": .pointer(toStep: 0),
    ]
    if let replyTo {
      steps.append(comment(replyTo, ofThreadStep: 0))
      fields["replyTo"] = .value(.int(Int64(replyTo)))
    }
    steps.append(
      .create(className: Board.commentClass, fields: fields, acl: .publicRead(owner: userId)))
    steps.append(.advanceRead(parentStep: 0, childStep: steps.count - 1))
    return WriteOperation(steps)
  }

  /// Thread `number` (step 0) deleted by its author or taken down by a moderator (step 1).
  static func removeThread(_ number: Int) -> WriteOperation {
    WriteOperation([thread(number), .remove(step: 0)])
  }

  /// Comment `number` of thread `threadNumber` (steps 0 and 1) deleted or taken down (step 2).
  static func removeComment(_ number: Int, inThread threadNumber: Int) -> WriteOperation {
    WriteOperation([thread(threadNumber), comment(number, ofThreadStep: 0), .remove(step: 1)])
  }

  /// Thread `number` (step 0), checked editable (step 1), with `fields` set (step 2).
  static func editThread(_ number: Int, fields: [String: JSONValue]) -> WriteOperation {
    WriteOperation([
      thread(number), .requireEditable(step: 0),
      .update(step: 0, set: fields.mapValues(Operand.value)),
    ])
  }

  /// Comment `number` of thread `threadNumber` (steps 0 and 1), checked editable (step 2), its
  /// text set (step 3).
  static func editComment(_ number: Int, inThread threadNumber: Int, text: String)
    -> WriteOperation
  {
    WriteOperation([
      thread(threadNumber), comment(number, ofThreadStep: 0), .requireEditable(step: 1),
      .update(step: 1, set: ["text": .value(.string(text))]),
    ])
  }

  /// Thread `number` (step 0) marked `mark` by the caller, any other mark of it taken off; a
  /// thread already so marked stops at step 2 having written nothing.
  static func mark(_ number: Int, _ mark: Board.ThreadMark, owner userId: String)
    -> WriteOperation
  {
    let others = Board.ThreadMark.allCases.filter { $0 != mark }.map {
      JSONValue.string($0.rawValue)
    }
    return WriteOperation([
      thread(number),
      .findAll(
        className: Board.preferenceClass,
        equalTo: ["user": .caller, "thread": .value(.int(Int64(number)))]),
      .stopIf(step: 1, field: "kind", equals: .string(mark.rawValue)),
      .deleteFound(step: 1, whereIn: ["kind": others]),
      .create(
        className: Board.preferenceClass,
        fields: ["kind": .value(.string(mark.rawValue)), "thread": .value(.int(Int64(number)))],
        acl: ACL(readers: [userId], writers: [userId])),
    ])
  }

  /// The caller's `mark` of thread `number` taken off: what step 0 found.
  static func unmark(_ number: Int, _ mark: Board.ThreadMark) -> WriteOperation {
    WriteOperation([
      .findAll(
        className: Board.preferenceClass,
        equalTo: [
          "user": .caller, "thread": .value(.int(Int64(number))),
          "kind": .value(.string(mark.rawValue)),
        ]),
      .deleteFound(step: 0, whereIn: [:]),
    ])
  }

  /// The caller leaves now, by the engine's clock: one visit record kept.
  static func leaving(owner userId: String) -> WriteOperation {
    WriteOperation([
      .findAll(
        className: Board.preferenceClass,
        equalTo: ["user": .caller, "kind": .value(.string("visit"))]),
      .keepOne(
        step: 0, className: Board.preferenceClass, set: ["lastLeft": .now],
        create: ["kind": .value(.string("visit"))],
        acl: ACL(readers: [userId], writers: [userId])),
    ])
  }

  private static func thread(_ number: Int) -> WriteStep {
    .find(className: Board.threadClass, equalTo: ["number": .value(.int(Int64(number)))])
  }

  private static func comment(_ number: Int, ofThreadStep step: Int) -> WriteStep {
    .find(
      className: Board.commentClass,
      equalTo: ["thread": .pointer(toStep: step), "number": .value(.int(Int64(number)))])
  }
}

extension Board {
  /// Runs `write` whole; a failing step's error is told as `refusal` says (given the step and
  /// its error), else as it is.
  func perform(
    _ write: WriteOperation, refusal: (Int, DatastoreError) throws -> Error
  ) throws -> WriteOutcome {
    do {
      return try client.perform(write)
    } catch let failure as WriteOperationError {
      guard let error = failure.error as? DatastoreError else { throw failure.error }
      throw try refusal(failure.step, error)
    }
  }

  /// Deletes or takes down what the last step of `write` names, saying who may when it is
  /// refused (`author` reads the post again, with its author, to say whose it is).
  func deletion(
    _ write: WriteOperation, label: String, threadNumber: Int, commentNumber: Int? = nil,
    author: () throws -> DataObject
  ) throws -> Deletion {
    let removing = write.steps.count - 1
    let outcome = try perform(write) { step, error in
      try postRefusal(
        step, error, postStep: removing, label: label, threadNumber: threadNumber,
        commentNumber: commentNumber, onlyAuthor: BoardReason.onlyAuthorMayDelete, author: author)
    }
    switch outcome.removal(removing) {
    case .takenDown: return .takenDown
    case .deleted, nil: return .deleted
    }
  }

  /// A refused write on one post (thread `threadNumber`, step 0, or its comment `commentNumber`,
  /// step 1) said as the board says it: no such thread or comment; at `postStep`, the step that
  /// edits or removes the post, a taken-down post (gone for both) or someone else's post
  /// (`onlyAuthor`, saying whose: `author` reads the post again). A refusal that already says
  /// why (a ban) is kept.
  func postRefusal(
    _ step: Int, _ error: DatastoreError, postStep: Int, label: String, threadNumber: Int,
    commentNumber: Int? = nil, onlyAuthor: (_ author: String, _ label: String) -> BoardReason,
    author: () throws -> DataObject
  ) throws -> Error {
    switch (step, error.code) {
    case (0, .notFound):
      return DatastoreError(.notFound, reason: BoardReason.noThread(threadNumber))
    case (1, .notFound) where commentNumber != nil:
      return DatastoreError(
        .notFound,
        reason: BoardReason.noComment(thread: threadNumber, comment: commentNumber ?? 0))
    case (postStep, .notFound):
      return DatastoreError(.notFound, reason: BoardReason.takenDown(label: label))
    case (postStep, .noAccess) where error.reason == nil:
      return DatastoreError(
        .noAccess, reason: onlyAuthor(Board.authorName(try author()), label))
    default: return error
    }
  }

  /// Thread and comment numbers start at 1.
  static func checkNumber(_ number: Int, _ what: BoardReason.Numbered) throws {
    guard number > 0 else {
      throw DatastoreError(.invalid, field: what.rawValue, reason: BoardReason.startsAtOne(what))
    }
  }

  /// An operation that returned without what it makes (an engine's fault, never a person's).
  var missingOutcome: DatastoreError {
    DatastoreError(.systemError, field: "write")
  }
}
