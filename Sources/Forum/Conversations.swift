import Datastore

/// A private conversation between the signed-in person and one other user (seed 002). It has no
/// board-wide number: it is addressed by the partner's handle (`@bob`), so nothing about it shows
/// in the numbers others see.
public struct ForumConversation: Equatable, Sendable {
  public let objectId: String
  /// The other member (never the signed-in person).
  public let partner: User
  public let messageCount: Int
  /// The number the newest message got (deleted ones included).
  public let lastMessageNumber: Int
  public let createDate: Int64
  /// When its newest message was sent (milliseconds since 1970).
  public let lastActivity: Int64
  /// The newest message, filled in by the inbox.
  public internal(set) var lastMessage: ForumMessage?
  /// Messages after the signed-in person's read position; nil until read positions exist.
  public internal(set) var unread: Int?
  /// True when its stored row could not be read (written by hand).
  public let isDamaged: Bool

  /// The REST shape plus the board's fields: `partner` as the user's public fields, `unread`.
  public var json: JSONValue {
    var plain = object
    plain.included = [:]
    guard case .object(var fields) = plain.json else { return plain.json }
    if isDamaged { return Board.damagedJSON(object) }
    fields["pair"] = nil
    Board.ncmbDates(&fields)
    fields["partner"] = Self.userJSON(partner)
    fields["lastMessage"] = lastMessage?.json
    fields["unread"] = unread.map { .int(Int64($0)) } ?? .null
    return .object(fields)
  }
  private let object: DataObject

  init(_ object: DataObject, viewer: String) {
    objectId = object.objectId
    isDamaged = object.isDamaged
    let starter = object["user"]?.pointerId ?? ""
    // The starter is `user`; the other member is whichever of the two the viewer is not.
    let partnerKey = starter == viewer ? "partner" : "user"
    let partnerId = object[partnerKey]?.pointerId ?? ""
    partner =
      object.included[partnerKey].map(User.init(object:))
      ?? User(
        object: DataObject(
          className: User.className, objectId: partnerId, createDate: 0, updateDate: 0,
          acl: ACL(), fields: [:]))
    messageCount = Int(max(0, object["messageCount"]?.intValue ?? 0))
    lastMessageNumber = Int(max(0, object["lastMessageNumber"]?.intValue ?? 0))
    createDate = object.createDate
    lastActivity = object["lastActivity"]?.intValue ?? object.createDate
    self.object = object
  }

  static func userJSON(_ user: User) -> JSONValue {
    .object([
      "objectId": .string(user.objectId), "userName": .string(user.userName),
      "displayName": .string(user.displayName),
    ])
  }
}

/// One message of a conversation.
public struct ForumMessage: Equatable, Sendable {
  /// Stable within its conversation (`@bob/3`).
  public let number: Int
  public let conversationId: String
  public let objectId: String
  public let text: String
  public let authorId: String
  public let authorName: String
  public let authorUserName: String
  public let createDate: Int64
  public let isMine: Bool
  /// True when its stored row could not be read (written by hand): only its number is shown.
  public let isDamaged: Bool
  /// The REST shape plus `number`, `displayName`, `userName`.
  public var json: JSONValue {
    Board.restJSON(object, displayName: authorName, userName: authorUserName)
  }
  private let object: DataObject

  init(_ object: DataObject, viewer: String?) {
    number = Int(object["number"]?.intValue ?? 0)
    conversationId = object["conversation"]?.pointerId ?? ""
    objectId = object.objectId
    isDamaged = object.isDamaged
    text = isDamaged ? "" : object["text"]?.stringValue ?? ""
    authorId = object["user"]?.pointerId ?? ""
    let author = object.included["user"].map(User.init(object:))
    authorName = author?.displayName ?? "(deleted user)"
    authorUserName = author?.userName ?? ""
    createDate = object.createDate
    isMine = viewer != nil && authorId == viewer
    self.object = object
  }
}
