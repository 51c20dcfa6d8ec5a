@_spi(Tools) import Datastore
import Forum
import Foundation

/// `forum-bench seed --dms N`: N direct messages between people other than the bench's viewer,
/// laid out as `Board.sendMessage` writes them (one conversation per pair, messages numbered by
/// the engine), so a listing's cost can be measured on a board that is mostly private posts.
enum DirectMessageSeed {
  // Board's class names; Forum keeps them internal.
  static let conversationClass = "Conversation"
  static let messageClass = "Message"
  /// Messages per conversation on average; each person is in about ten conversations.
  static let messagesPerConversation = 30

  /// Seeds `count` messages; returns how many conversations hold them.
  static func seed(
    _ count: Int, store: Datastore, profiles: ProfileStore, batch: Int,
    random: inout SeededGenerator, text: TextPool
  ) throws -> Int {
    guard count > 0 else { return 0 }
    let conversationCount = max(1, count / messagesPerConversation)
    let userCount = min(20_000, max(3, conversationCount / 5 + 2))
    var people: [(client: DatastoreClient, id: String)] = []
    for index in 0..<userCount {
      let (client, user) = try store.signIn(profile: "dm-user\(index + 1)", in: profiles)
      people.append((client, user.objectId))
    }
    // Distinct pairs, started by either side.
    var pairs: [(Int, Int)] = []
    var taken: Set<String> = []
    while pairs.count < min(conversationCount, userCount * (userCount - 1) / 2) {
      let one = Int.random(in: 0..<userCount, using: &random)
      let other = Int.random(in: 0..<userCount, using: &random)
      guard one != other, taken.insert(PairRule.pairKey(people[one].id, people[other].id)).inserted
      else { continue }
      pairs.append((one, other))
    }
    var conversations: [(id: String, members: (Int, Int))] = []
    for chunk in stride(from: 0, to: pairs.count, by: batch) {
      try people[0].client.transaction {
        for (one, other) in pairs[chunk..<min(pairs.count, chunk + batch)] {
          let created = try people[one].client.create(
            conversationClass,
            fields: ["partner": .pointer(className: User.className, objectId: people[other].id)],
            acl: ACL(readers: [people[one].id, people[other].id]))
          conversations.append((created.objectId, (one, other)))
        }
      }
    }
    var sent = 0
    while sent < count {
      try people[0].client.transaction {
        let end = min(count, sent + batch)
        while sent < end {
          let conversation = conversations.randomElement(using: &random)!
          let writer =
            people[Bool.random(using: &random) ? conversation.members.0 : conversation.members.1]
          try writer.client.create(
            messageClass,
            fields: [
              "text": .string(text.comment(&random)),
              "conversation": .pointer(className: conversationClass, objectId: conversation.id),
            ],
            acl: ACL(
              readers: [people[conversation.members.0].id, people[conversation.members.1].id],
              writers: [writer.id]))
          sent += 1
        }
      }
      FileHandle.standardError.write(Data("seed: \(sent) of \(count) direct messages\n".utf8))
    }
    return conversations.count
  }
}
