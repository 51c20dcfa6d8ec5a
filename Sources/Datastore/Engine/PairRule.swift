/// Objects of `className` are private to exactly two users, one object per pair: a conversation.
/// On insert the engine, whatever the client sent:
/// - sets `ownerField` to the caller (a caller without a user is `E401001`);
/// - requires `partnerField` to point at an existing user (`E404001`) other than the caller
///   (`E400002`);
/// - sets the ACL to readers = exactly {caller, partner} and no writers, so nobody (not the
///   starter, not a member with psql on PostgreSQL) can add a reader, update or delete it; the
///   engine's own bookkeeping (a child's counters) still updates it;
/// - sets `pairField` to `pairKey(caller, partner)`, unique within the class: a second object for
///   the same two people is refused (`E400002`). The key names the caller, so a refusal can only
///   ever tell a caller about their own conversations, never about two other people.
public struct PairRule: Equatable, Sendable {
  public let className: String
  public let ownerField: String
  public let partnerField: String
  public let pairField: String

  public init(className: String, ownerField: String, partnerField: String, pairField: String) {
    self.className = className
    self.ownerField = ownerField
    self.partnerField = partnerField
    self.pairField = pairField
  }

  /// The pair's key: the two user ids in byte order, joined by `:` (both engines compute the same).
  public static func pairKey(_ one: String, _ other: String) -> String {
    Array(one.utf8).lexicographicallyPrecedes(Array(other.utf8))
      ? "\(one):\(other)" : "\(other):\(one)"
  }
}

extension EngineRules {
  /// The rule under which `className` is a pair's object, if any.
  public func pairRule(of className: String) -> PairRule? {
    pairs.first { $0.className == className }
  }
}
