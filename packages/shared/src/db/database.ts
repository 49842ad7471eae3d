import type {
  CheckoutAttemptsTable,
  OrdersTable,
  SimulatedGatewayChargesTable,
  SimulatedGatewayConditionsTable,
  StoreProcessesTable,
} from '../checkout/checkout.table.js';
import type { AccountsTable, AuditLogTable, EventsTable, ListingsTable, PriceLevelsTable, SectionsTable } from '../events/events.table.js';
import type { AdmissionMinutesTable, QueueEntriesTable, QueueStateTable, StoreLoadTable } from '../queue/queue.table.js';
import type { HoldLossesTable, HoldsTable, InventoryReconciliationsTable, SeatsTable } from '../inventory/inventory.table.js';
import type { GaHoldUnitsTable, GaShardsTable } from '../inventory/ga.table.js';
import type { NotificationsTable, WebhookDeliveriesTable, WebhookEndpointsTable } from '../notify/notify.table.js';
import type { AvailabilityEventsTable, WaitlistEntriesTable, WaitlistOffersTable } from '../waitlist/waitlist.table.js';
import type {
  ConsoleSessionsTable,
  ConsoleUsersTable,
  OrganisationsTable,
  SignInFailuresTable,
  SignInLockoutsTable,
} from '../users/users.table.js';
import type { FairnessSignoffsTable } from '../events/signoff.table.js';
import type { LotteriesTable, LotteryRegistrationsTable, LotteryWinnersTable } from '../lottery/lottery.table.js';
import type { AccessCodeRedemptionsTable, AllocationsTable } from '../allocations/allocations.table.js';
import type { AccountBlocksTable } from '../support/blocks.table.js';

import type { AlertDeliveriesTable, AlertEndpointsTable, EventAlertsTable, SaleMinutesTable } from '../warroom/warroom.table.js';
import type { QueueSchedulesTable } from '../admission/schedule.table.js';
import type { RehearsalReportsTable } from '../rehearsal/rehearsal.table.js';
import type {
  TicketKeysTable,
  TicketPayoutsTable,
  TicketResalesTable,
  TicketScannersTable,
  TicketScansTable,
  TicketsTable,
} from '../tickets/tickets.table.js';

/** Every table of the system of record, as Kysely sees it. */
export interface Database {
  accounts: AccountsTable;
  listings: ListingsTable;
  events: EventsTable;
  price_levels: PriceLevelsTable;
  sections: SectionsTable;
  seats: SeatsTable;
  holds: HoldsTable;
  hold_losses: HoldLossesTable;
  ga_shards: GaShardsTable;
  ga_hold_units: GaHoldUnitsTable;
  checkout_attempts: CheckoutAttemptsTable;
  orders: OrdersTable;
  store_processes: StoreProcessesTable;
  simulated_gateway_charges: SimulatedGatewayChargesTable;
  simulated_gateway_conditions: SimulatedGatewayConditionsTable;
  audit_log: AuditLogTable;
  inventory_reconciliations: InventoryReconciliationsTable;
  queue_state: QueueStateTable;
  queue_entries: QueueEntriesTable;
  admission_minutes: AdmissionMinutesTable;
  store_load: StoreLoadTable;
  waitlist_entries: WaitlistEntriesTable;
  availability_events: AvailabilityEventsTable;
  waitlist_offers: WaitlistOffersTable;
  notifications: NotificationsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  organisations: OrganisationsTable;
  console_users: ConsoleUsersTable;
  console_sessions: ConsoleSessionsTable;
  sign_in_failures: SignInFailuresTable;
  sign_in_lockouts: SignInLockoutsTable;
  fairness_signoffs: FairnessSignoffsTable;
  lotteries: LotteriesTable;
  lottery_registrations: LotteryRegistrationsTable;
  lottery_winners: LotteryWinnersTable;
  allocations: AllocationsTable;
  access_code_redemptions: AccessCodeRedemptionsTable;
  account_blocks: AccountBlocksTable;
  event_alerts: EventAlertsTable;
  alert_endpoints: AlertEndpointsTable;
  alert_deliveries: AlertDeliveriesTable;
  sale_minutes: SaleMinutesTable;
  queue_schedules: QueueSchedulesTable;
  rehearsal_reports: RehearsalReportsTable;
  tickets: TicketsTable;
  ticket_keys: TicketKeysTable;
  ticket_resales: TicketResalesTable;
  ticket_payouts: TicketPayoutsTable;
  ticket_scanners: TicketScannersTable;
  ticket_scans: TicketScansTable;
}
