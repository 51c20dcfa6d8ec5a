import Datastore

/// Where a search word was found in a post: the text around its first occurrence, raw from the
/// database (sanitize before showing it).
public struct SearchSnippet: Equatable, Sendable {
  /// The field the snippet comes from (`title`, `description`, `text`).
  public let field: String
  public let before: String
  public let match: String
  public let after: String
  /// True when the field goes on before `before` / after `after`.
  public let cutBefore: Bool
  public let cutAfter: Bool

  /// The snippet as one line of plain text, with `…` where the field was cut.
  public var text: String {
    (cutBefore ? "…" : "") + before + match + after + (cutAfter ? "…" : "")
  }
}

/// A post that matched a search.
public struct SearchHit: Sendable {
  public enum Kind: String, Sendable {
    case thread
    case comment
    /// A direct message: only its conversation's two members ever find it.
    case message
  }

  public let kind: Kind
  /// `"12"` for a thread, `"12/3"` for a comment, `"@bob/3"` for a message.
  public let ref: String
  public let threadNumber: Int
  /// The thread's title (for a comment, its thread's; for a message, the other member's handle).
  public let threadTitle: String
  public let authorName: String
  public let isMine: Bool
  public let createDate: Int64
  /// True when the post's stored row could not be read: only its ref is shown.
  public let isDamaged: Bool
  /// The searched fields holding a word, in the order the board declares them.
  public let matchedFields: [String]
  public let snippet: SearchSnippet
  /// The post's REST shape plus `ref`, `type`, `matchedFields` and `snippet`.
  public let json: JSONValue
}

extension Board {
  /// The fields search looks in, by class: the board's declaration of its text indexes.
  static let searchFields: [String: [String]] = [
    threadClass: ["title", "description"], commentClass: ["text"], messageClass: ["text"],
  ]

  /// The text indexes `indexes` declares, from `searchFields`.
  static var textIndexes: [IndexSpec] {
    searchFields.keys.sorted().map { IndexSpec(textOf: $0, fields: searchFields[$0]!) }
  }

  /// Longest query, in characters: a search is typed by a person.
  public static let maximumQueryLength = 1000

  /// Posts holding every word (a word is matched as a substring, ASCII case ignored; a quoted
  /// phrase is one word), among those you can read, best first, `pageSize` a page. `author` is
  /// a handle in any case or a unique display name (`@` optional): only that person's posts; `thread`: only that thread and its
  /// comments. A missing author or thread is `E404001`; an empty query `E400003`; a query over
  /// `maximumQueryLength` characters or `TextSearch` limits `E400002`.
  public func search(_ words: [String], author: String? = nil, thread: Int? = nil, page: Int = 1)
    throws -> Page<SearchHit>
  {
    let terms = words.map { $0.trimmingWhiteSpace() }
    guard !terms.isEmpty, terms.allSatisfy({ !$0.isEmpty }) else {
      throw DatastoreError(.empty, field: "query")
    }
    guard terms.reduce(0, { $0 + $1.count }) <= Board.maximumQueryLength else {
      throw DatastoreError(
        .invalid, field: "query",
        reason: BoardReason.queryTooLong(limit: Board.maximumQueryLength))
    }
    let skip = try Board.offset(page: page)
    var threadConditions: [String: JSONValue] = [:]
    var commentConditions: [String: JSONValue] = [:]
    if let author {
      let user = try userNamed(author)
      threadConditions["user"] = .pointer(className: User.className, objectId: user)
      commentConditions["user"] = .pointer(className: User.className, objectId: user)
    }
    if let thread {
      let object = try threadObject(thread)
      threadConditions["number"] = .int(Int64(thread))
      commentConditions["thread"] = Board.pointer(to: object.objectId)
    }
    var targets = [
      TextSearch.Target(className: Board.threadClass, equalTo: threadConditions),
      TextSearch.Target(className: Board.commentClass, equalTo: commentConditions),
    ]
    // Messages live in conversations, not threads; the ACL keeps them to their two members.
    if thread == nil {
      var conditions: [String: JSONValue] = [:]
      conditions["user"] = threadConditions["user"]
      targets.append(TextSearch.Target(className: Board.messageClass, equalTo: conditions))
    }
    let search = TextSearch(
      terms: terms, targets: targets, limit: Board.pageSize + 1, skip: skip)
    let objects = try client.search(search, include: ["user", "thread", "conversation"])
    var handles: [String: String] = [:]
    let hits = try objects.prefix(Board.pageSize).compactMap {
      try hit($0, terms: terms, handles: &handles)
    }
    return Page(items: Array(hits), number: page, hasMore: objects.count > Board.pageSize)
  }

  /// The author `name` names, as `dm` resolves it (`@` optional): a handle in any case, or a
  /// unique display name.
  private func userNamed(_ handle: String) throws -> String {
    let name = handle.hasPrefix("@") ? String(handle.dropFirst()) : handle
    guard !name.isEmpty, name.count <= 64 else { throw DatastoreError(.invalid, field: "author") }
    return try user(handle: name).objectId
  }

  private func hit(_ object: DataObject, terms: [String], handles: inout [String: String]) throws
    -> SearchHit?
  {
    // Nothing of a damaged row is shown, so nothing of it is quoted either.
    let fields = object.isDamaged ? [] : Board.searchFields[object.className] ?? []
    let matched = fields.filter { field in
      let text = object[field]?.stringValue ?? ""
      return terms.contains { TextSearch.contains(text, $0) }
    }
    let snippet = Board.snippet(object, fields: fields, terms: terms)
    var extra: [String: JSONValue] = [
      "matchedFields": .array(matched.map { .string($0) }), "snippet": .string(snippet.text),
    ]
    if object.className == Board.threadClass {
      let thread = ForumThread(object, viewer: myId)
      extra["ref"] = .string(String(thread.number))
      extra["type"] = .string(SearchHit.Kind.thread.rawValue)
      return SearchHit(
        kind: .thread, ref: String(thread.number), threadNumber: thread.number,
        threadTitle: thread.title, authorName: thread.authorName, isMine: thread.isMine,
        createDate: thread.createDate, isDamaged: thread.isDamaged, matchedFields: matched,
        snippet: snippet,
        json: Board.merge(thread.json, extra))
    }
    if object.className == Board.messageClass {
      guard let conversation = object.included["conversation"] else { return nil }
      let members = [conversation["user"]?.pointerId, conversation["partner"]?.pointerId]
      let other = members.compactMap { $0 }.first { $0 != myId } ?? myId
      if handles[other] == nil {
        // A member's row written by hand may point at no one: the message is still found.
        handles[other] =
          (try? client.get(User.className, objectId: other)).map { User(object: $0).userName }
          ?? ""
      }
      let message = ForumMessage(object, viewer: myId)
      let handle = "@" + (handles[other] ?? "")
      let ref = "\(handle)/\(message.number)"
      extra["ref"] = .string(ref)
      extra["type"] = .string(SearchHit.Kind.message.rawValue)
      extra["with"] = .string(handle)
      return SearchHit(
        kind: .message, ref: ref, threadNumber: 0, threadTitle: handle,
        authorName: message.authorName, isMine: message.isMine, createDate: message.createDate,
        isDamaged: message.isDamaged, matchedFields: matched, snippet: snippet,
        json: Board.merge(message.json, extra))
    }
    guard let parent = object.included["thread"] else { return nil }
    let threadNumber = Int(parent["number"]?.intValue ?? 0)
    let comment = ForumComment(object, threadNumber: threadNumber, viewer: myId)
    let ref = "\(threadNumber)/\(comment.number)"
    extra["ref"] = .string(ref)
    extra["type"] = .string(SearchHit.Kind.comment.rawValue)
    extra["threadNumber"] = .int(Int64(threadNumber))
    return SearchHit(
      kind: .comment, ref: ref, threadNumber: threadNumber,
      threadTitle: parent.isDamaged ? "" : parent["title"]?.stringValue ?? "",
      authorName: comment.authorName,
      isMine: comment.isMine, createDate: comment.createDate, isDamaged: comment.isDamaged,
      matchedFields: matched,
      snippet: snippet, json: Board.merge(comment.json, extra))
  }

  private static func merge(_ json: JSONValue, _ extra: [String: JSONValue]) -> JSONValue {
    guard case .object(var fields) = json else { return json }
    fields.merge(extra) { _, new in new }
    return .object(fields)
  }

  /// Characters of context shown before and after the match.
  static let snippetContext = (before: 24, after: 72)

  /// The earliest occurrence of any term in the first field holding one, with its context.
  static func snippet(_ object: DataObject, fields: [String], terms: [String]) -> SearchSnippet {
    for field in fields {
      let text = object[field]?.stringValue ?? ""
      let found = terms.compactMap { TextSearch.range(of: $0, in: text) }
      guard let range = found.min(by: { $0.lowerBound < $1.lowerBound }) else { continue }
      let scalars = Array(text.unicodeScalars)
      let start = max(0, range.lowerBound - snippetContext.before)
      let end = min(scalars.count, range.upperBound + snippetContext.after)
      func string(_ part: ArraySlice<Unicode.Scalar>) -> String {
        String(String.UnicodeScalarView(part))
      }
      return SearchSnippet(
        field: field, before: string(scalars[start..<range.lowerBound]),
        match: string(scalars[range]), after: string(scalars[range.upperBound..<end]),
        cutBefore: start > 0, cutAfter: end < scalars.count)
    }
    // Nothing to point at (a word split across two fields cannot match): the start of the post.
    let text = object[fields.first ?? ""]?.stringValue ?? ""
    let scalars = Array(text.unicodeScalars)
    let end = min(scalars.count, snippetContext.after)
    return SearchSnippet(
      field: fields.first ?? "", before: "", match: "",
      after: String(String.UnicodeScalarView(scalars[..<end])), cutBefore: false,
      cutAfter: end < scalars.count)
  }
}
