import Datastore

/// Replies: a comment may answer another comment of its thread (`replyTo`); it is shown under a
/// one-line quote of that comment.
extension Board {
  /// `comments` with the quotes of the comments they answer: from the same page when it holds
  /// them, otherwise looked up one by one (a page has at most `pageSize`).
  func withQuotes(_ comments: [ForumComment], of thread: ForumThread) throws -> [ForumComment] {
    guard comments.contains(where: { $0.replyTo != nil }) else { return comments }
    var byNumber = Dictionary(
      comments.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
    return try comments.map { comment in
      guard let number = comment.replyTo else { return comment }
      if byNumber[number] == nil {
        let query = Query(
          className: Board.commentClass,
          equalTo: ["thread": Board.pointer(to: thread.objectId), "number": .int(Int64(number))],
          limit: 1, include: ["user"], includeKeys: User.shownFields)
        if let object = try client.find(query).first {
          byNumber[number] = ForumComment(object, threadNumber: thread.number, viewer: myId)
        }
      }
      var comment = comment
      comment.quote = byNumber[number].map {
        Quote(
          number: $0.number, authorName: $0.authorName, text: $0.text,
          moderated: $0.moderatedDate != nil, damaged: $0.isDamaged)
      }
      return comment
    }
  }
}
