import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Facts about a thread's image, kept on the thread so a listing needs no file lookup.
public struct ImageSummary: Equatable, Sendable {
  public let fileName: String
  public let format: ImageFormat
  public let width: Int
  public let height: Int
  public let byteCount: Int
  /// The Exif orientation (1...8) the stored picture keeps.
  public let orientation: Int
  /// Metadata removed before storing ("Exif", "XMP", …); empty when there was none.
  public let removedMetadata: [String]

  public var json: JSONValue {
    .object([
      "mimeType": .string(format.mimeType), "width": .int(Int64(width)),
      "height": .int(Int64(height)), "fileSize": .int(Int64(byteCount)),
      "orientation": .int(Int64(orientation)),
      "removedMetadata": .array(removedMetadata.map { .string($0) }),
    ])
  }

  /// The stored bytes as the image they were prepared into, without checking and stripping
  /// them again on every view: that was done once, before they were stored.
  public func storedImage(_ bytes: [UInt8]) -> PreparedImage {
    PreparedImage(
      format: format, width: width, height: height, orientation: orientation, data: Data(bytes),
      removedMetadata: removedMetadata)
  }

  init?(fileName: String?, json: JSONValue?) {
    guard let fileName, let fields = json?.objectValue,
      let mime = fields["mimeType"]?.stringValue,
      let format = ImageFormat.allCases.first(where: { $0.mimeType == mime })
    else { return nil }
    self.fileName = fileName
    self.format = format
    width = Int(fields["width"]?.intValue ?? 0)
    height = Int(fields["height"]?.intValue ?? 0)
    byteCount = Int(fields["fileSize"]?.intValue ?? 0)
    orientation = Int(fields["orientation"]?.intValue ?? 1)
    if case .array(let names)? = fields["removedMetadata"] {
      removedMetadata = names.compactMap(\.stringValue)
    } else {
      removedMetadata = []
    }
  }

  init(fileName: String, image: PreparedImage) {
    self.fileName = fileName
    format = image.format
    width = image.width
    height = image.height
    byteCount = image.data.count
    orientation = image.orientation
    removedMetadata = image.removedMetadata
  }
}

/// A thread as people see it on the board.
public struct ForumThread: Equatable, Sendable {
  /// The stable number people type (`show 12`); never reused.
  public let number: Int
  public let objectId: String
  public let title: String
  public let description: String
  public let authorId: String
  public let authorName: String
  /// The author's unique handle (without `@`), to tell apart two people of one display name.
  public let authorUserName: String
  public let commentCount: Int
  /// The number the newest comment got (deleted ones included): what a follower compares.
  public let lastCommentNumber: Int
  public let createDate: Int64
  /// When the thread or its newest comment was posted (milliseconds since 1970).
  public let lastActivity: Int64
  public let image: ImageSummary?
  /// True when the signed-in person wrote it.
  public let isMine: Bool
  /// When its author last edited the title or description (nil: never edited).
  public let editDate: Int64?
  /// When a moderator took it down (nil: it stands); the title and description are gone.
  public let moderatedDate: Int64?
  /// When a moderator or the owner pinned it (nil: not pinned); `list` shows it first.
  public let pinnedDate: Int64?
  /// True when its stored row could not be read (written by hand): only its number is shown.
  public let isDamaged: Bool
  /// Posts in it the signed-in person has not read: others' comments after their read
  /// position, plus the thread itself when they never opened it and it is not theirs.
  public internal(set) var unread = 0
  /// The highest comment number the signed-in person has read here; nil when they never opened
  /// it (or nobody is signed in).
  public internal(set) var readPosition: Int?
  /// The backend's REST shape plus `number`, `commentCount`, `displayName`, `unread`. Built on
  /// demand: only `--json` output needs it, and building it costs more than reading the row.
  public var json: JSONValue {
    var json = Board.restJSON(object, displayName: authorName, userName: authorUserName)
    if case .object(var fields) = json {
      fields["unread"] = .int(Int64(unread))
      json = .object(fields)
    }
    return json
  }
  private let object: DataObject

  /// True while a moderator's `flag` is set on it.
  public func isFlagged(_ flag: ThreadFlag) -> Bool { object[flag.field]?.intValue != nil }

  init(_ object: DataObject, viewer: String?) {
    number = Int(object["number"]?.intValue ?? 0)
    objectId = object.objectId
    isDamaged = object.isDamaged
    // What could be read of a damaged row is not shown: it may be anything.
    title = isDamaged ? "" : object["title"]?.stringValue ?? ""
    description = isDamaged ? "" : object["description"]?.stringValue ?? ""
    authorId = object["user"]?.pointerId ?? ""
    let author = object.included["user"].map(User.init(object:))
    authorName = author?.displayName ?? "(deleted user)"
    authorUserName = author?.userName ?? ""
    // Never below zero: a count written by hand (sqlite3) must not make a position invalid.
    commentCount = Int(max(0, object["commentCount"]?.intValue ?? 0))
    lastCommentNumber = Int(max(0, object["lastCommentNumber"]?.intValue ?? 0))
    createDate = object.createDate
    lastActivity = object["lastActivity"]?.intValue ?? object.createDate
    image = ImageSummary(fileName: object["fileName"]?.stringValue, json: object["image"])
    isMine = viewer != nil && authorId == viewer
    editDate = object["editDate"]?.intValue
    moderatedDate = object["moderatedDate"]?.intValue
    pinnedDate = object[Board.pinField]?.intValue
    self.object = object
  }
}

/// A comment as people see it under its thread.
public struct ForumComment: Equatable, Sendable {
  /// Stable within its thread (`12/3` is comment 3 of thread 12).
  public let number: Int
  public let threadNumber: Int
  public let objectId: String
  public let text: String
  public let authorId: String
  public let authorName: String
  /// The author's unique handle (without `@`).
  public let authorUserName: String
  public let createDate: Int64
  /// Later than `createDate` once the comment was edited.
  public let updateDate: Int64
  public let isMine: Bool
  /// When its author last edited it (nil: never edited).
  public let editDate: Int64?
  /// When a moderator took it down (nil: it stands); the text is gone.
  public let moderatedDate: Int64?
  /// True when its stored row could not be read (written by hand): only its number is shown.
  public let isDamaged: Bool
  /// The number of the comment in the same thread it answers (`reply 12/3`).
  public let replyTo: Int?
  /// The start of that comment, for a one-line quote (nil when it is gone or not a reply).
  public internal(set) var quote: Quote?
  /// The backend's REST shape plus `number`, `displayName`, `userName`, built on demand.
  public var json: JSONValue {
    Board.restJSON(object, displayName: authorName, userName: authorUserName)
  }
  private let object: DataObject

  init(_ object: DataObject, threadNumber: Int, viewer: String?) {
    number = Int(object["number"]?.intValue ?? 0)
    self.threadNumber = threadNumber
    objectId = object.objectId
    isDamaged = object.isDamaged
    text = isDamaged ? "" : object["text"]?.stringValue ?? ""
    authorId = object["user"]?.pointerId ?? ""
    let author = object.included["user"].map(User.init(object:))
    authorName = author?.displayName ?? "(deleted user)"
    authorUserName = author?.userName ?? ""
    createDate = object.createDate
    updateDate = object.updateDate
    isMine = viewer != nil && authorId == viewer
    editDate = object["editDate"]?.intValue
    moderatedDate = object["moderatedDate"]?.intValue
    replyTo = object["replyTo"]?.intValue.map { Int($0) }
    self.object = object
  }
}

/// What a reply shows of the comment it answers: who wrote it and how it starts.
public struct Quote: Equatable, Sendable {
  public let number: Int
  public let authorName: String
  /// The comment's text (the renderer cuts it to one line); empty when a moderator took it down.
  public let text: String
  public let moderated: Bool
  /// The comment's row could not be read: the quote says so instead.
  public let damaged: Bool
}

/// One page of a listing. `hasMore` says whether a next page exists.
public struct Page<Item: Sendable>: Sendable {
  public let items: [Item]
  public let number: Int
  public let hasMore: Bool
  /// How many there are on all pages, when it was counted with this one (`Board.threads`).
  public var total: Int? = nil
}
