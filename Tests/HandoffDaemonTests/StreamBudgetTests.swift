import Testing

@testable import HandoffDaemon

/// The bound on concurrent continuation streams (`[streams] max_per_user`, `max_total`).
@Suite struct StreamBudgetTests {
    @Test func eachUserHasItsShareAndTheLaptopItsTotal() throws {
        var budget = StreamBudget(perUser: 2, total: 3)
        try budget.take(for: 1000)
        try budget.take(for: 1000)
        #expect(throws: StreamBudgetError.userLimit(2)) { try budget.take(for: 1000) }
        try budget.take(for: 1001)
        #expect(budget.count == 3)
        #expect(throws: StreamBudgetError.laptopLimit(3)) { try budget.take(for: 1002) }
        budget.give(for: 1000)
        try budget.take(for: 1002)
        #expect(budget.count == 3)
        #expect(StreamBudgetError.userLimit(2).description.contains("max_per_user"))
    }

    @Test func givingBackMoreThanWasTakenChangesNothing() throws {
        var budget = StreamBudget(perUser: 1, total: 16)
        budget.give(for: 7)
        try budget.take(for: 7)
        budget.give(for: 7)
        budget.give(for: 7)
        try budget.take(for: 7)
        #expect(throws: StreamBudgetError.userLimit(1)) { try budget.take(for: 7) }
    }
}
