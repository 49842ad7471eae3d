import type { Migration } from 'kysely';
import * as m20261129_1530 from './2026_11_29_1530_create_core_schema.js';
import * as m20261129_1610 from './2026_11_29_1610_create_waiting_room.js';
import * as m20261129_1800 from './2026_11_29_1800_create_waitlist.js';
import * as m20261129_1900 from './2026_11_29_1900_create_console_users.js';
import * as m20261129_1930 from './2026_11_29_1930_create_worker_heartbeats.js';
import * as m20261129_2010 from './2026_11_29_2010_create_fairness_signoffs.js';
import * as m20261129_2020 from './2026_11_29_2020_create_ga_counters.js';
import * as m20261129_2030 from './2026_11_29_2030_add_device_limits.js';
import * as m20261129_2031 from './2026_11_29_2031_update_ga_hold_function.js';
import * as m20261129_2040 from './2026_11_29_2040_index_checkout_attempts_created.js';
import * as m20261129_2100 from './2026_11_29_2100_create_allocations.js';
import * as m20261129_2110 from './2026_11_29_2110_create_lottery.js';
import * as m20261129_2130 from './2026_11_29_2130_ga_allocations.js';
import * as m20261129_2200 from './2026_11_29_2200_add_lottery_notifications.js';
import * as m20261130_0010 from './2026_11_30_0010_defer_release_fanout.js';
import * as m20261202_0300 from './2026_12_02_0300_add_controller_inside.js';
import * as m20261202_0310 from './2026_12_02_0310_add_checkout_owners.js';
import * as m20261202_0320 from './2026_12_02_0320_add_hold_idempotency.js';
import * as m20261202_0500 from './2026_12_02_0500_add_event_look.js';
import * as m20261202_0200 from './2026_12_02_0200_mark_legacy_card_fingerprints.js';
import * as m20261202_0600 from './2026_12_02_0600_count_gateway_failures.js';
import * as m20261202_0610 from './2026_12_02_0610_create_alerts.js';
import * as m20261202_0620 from './2026_12_02_0620_create_queue_schedules.js';
import * as m20261202_0630 from './2026_12_02_0630_create_sale_minutes.js';
import * as m20261202_0700 from './2026_12_02_0700_add_console_user_disabled.js';
import * as m20261202_0710 from './2026_12_02_0710_create_account_blocks.js';
import * as m20261202_0720 from './2026_12_02_0720_add_event_time_zone_currency.js';
import * as m20261203_0200 from './2026_12_03_0200_create_sign_in_throttle.js';
import * as m20261203_0300 from './2026_12_03_0300_create_hold_losses.js';
import * as m20261204_0200 from './2026_12_04_0200_add_event_rehearsal.js';
import * as m20261204_0210 from './2026_12_04_0210_create_rehearsal_reports.js';
import * as m20261204_0300 from './2026_12_04_0300_create_simulated_gateway_conditions.js';
import * as m20261205_0130 from './2026_12_05_0130_write_hold_keys_with_holds.js';
import * as m20261205_0140 from './2026_12_05_0140_store_process_connections.js';
import * as m20261205_0400 from './2026_12_05_0400_add_event_no_single_seats.js';
import * as m20261205_2800 from './2026_12_05_2800_add_admission_window.js';
import * as m20261206_2900 from './2026_12_06_2900_create_tickets.js';
import * as m20261206_3150 from './2026_12_06_3150_index_orders_by_event_time.js';
import * as m20261206_3200 from './2026_12_06_3200_add_queue_entry_device_moves.js';
import * as m20261207_4200 from './2026_12_07_4200_add_queue_state_section_counts.js';
import * as m20261207_4600 from './2026_12_07_4600_add_account_display_name.js';
import * as m20261207_4610 from './2026_12_07_4610_add_order_refunds.js';
import * as m20261208_4100 from './2026_12_08_4100_keep_seat_counts.js';
import * as m20261209_1000 from './2026_12_09_1000_add_store_load_holds_shed.js';
import * as m20261210_1200 from './2026_12_10_1200_lock_instrument_seats.js';
import * as m20261211_1000 from './2026_12_11_1000_add_holds_ended_indexes.js';
import * as m20261212_2000 from './2026_12_12_2000_add_pending_attempts_instrument_idx.js';
import * as m20261212_7000 from './2026_12_12_7000_index_confirmed_orders_by_fan.js';
import * as m20261208_4400 from './2026_12_08_4400_add_store_load_admitted_wait.js';

/** Every migration, in order. A static list so the migrator works the same under tsx, vitest and a bundler. */
export const migrations: Record<string, Migration> = {
  '2026_11_29_1530_create_core_schema': m20261129_1530,
  '2026_11_29_1610_create_waiting_room': m20261129_1610,
  '2026_11_29_1800_create_waitlist': m20261129_1800,
  '2026_11_29_1900_create_console_users': m20261129_1900,
  '2026_11_29_1930_create_worker_heartbeats': m20261129_1930,
  '2026_11_29_2010_create_fairness_signoffs': m20261129_2010,
  '2026_11_29_2020_create_ga_counters': m20261129_2020,
  '2026_11_29_2030_add_device_limits': m20261129_2030,
  '2026_11_29_2031_update_ga_hold_function': m20261129_2031,
  '2026_11_29_2040_index_checkout_attempts_created': m20261129_2040,
  '2026_11_29_2100_create_allocations': m20261129_2100,
  '2026_11_29_2110_create_lottery': m20261129_2110,
  '2026_11_29_2130_ga_allocations': m20261129_2130,
  '2026_11_29_2200_add_lottery_notifications': m20261129_2200,
  '2026_11_30_0010_defer_release_fanout': m20261130_0010,
  '2026_12_02_0200_mark_legacy_card_fingerprints': m20261202_0200,
  '2026_12_02_0300_add_controller_inside': m20261202_0300,
  '2026_12_02_0310_add_checkout_owners': m20261202_0310,
  '2026_12_02_0320_add_hold_idempotency': m20261202_0320,
  '2026_12_02_0500_add_event_look': m20261202_0500,
  '2026_12_02_0600_count_gateway_failures': m20261202_0600,
  '2026_12_02_0610_create_alerts': m20261202_0610,
  '2026_12_02_0620_create_queue_schedules': m20261202_0620,
  '2026_12_02_0630_create_sale_minutes': m20261202_0630,
  '2026_12_02_0700_add_console_user_disabled': m20261202_0700,
  '2026_12_02_0710_create_account_blocks': m20261202_0710,
  '2026_12_02_0720_add_event_time_zone_currency': m20261202_0720,
  '2026_12_03_0200_create_sign_in_throttle': m20261203_0200,
  '2026_12_03_0300_create_hold_losses': m20261203_0300,
  '2026_12_04_0200_add_event_rehearsal': m20261204_0200,
  '2026_12_04_0210_create_rehearsal_reports': m20261204_0210,
  '2026_12_04_0300_create_simulated_gateway_conditions': m20261204_0300,
  '2026_12_05_0130_write_hold_keys_with_holds': m20261205_0130,
  '2026_12_05_0140_store_process_connections': m20261205_0140,
  '2026_12_05_0400_add_event_no_single_seats': m20261205_0400,
  '2026_12_05_2800_add_admission_window': m20261205_2800,
  '2026_12_06_2900_create_tickets': m20261206_2900,
  '2026_12_06_3150_index_orders_by_event_time': m20261206_3150,
  '2026_12_06_3200_add_queue_entry_device_moves': m20261206_3200,
  '2026_12_07_4200_add_queue_state_section_counts': m20261207_4200,
  '2026_12_07_4600_add_account_display_name': m20261207_4600,
  '2026_12_07_4610_add_order_refunds': m20261207_4610,
  '2026_12_08_4100_keep_seat_counts': m20261208_4100,
  '2026_12_08_4400_add_store_load_admitted_wait': m20261208_4400,
  '2026_12_09_1000_add_store_load_holds_shed': m20261209_1000,
  '2026_12_10_1200_lock_instrument_seats': m20261210_1200,
  '2026_12_11_1000_add_holds_ended_indexes': m20261211_1000,
  '2026_12_12_2000_add_pending_attempts_instrument_idx': m20261212_2000,
  '2026_12_12_7000_index_confirmed_orders_by_fan': m20261212_7000,
};
