// The order reference a fan sees (on the order confirmation) and quotes to support: the first 8 hex digits of the
// order's id, in capitals ("05B0DD69"). One home, so the fans' page, the console and support agree.

/** How many hex digits of the order id the reference has. */
export const ORDER_REFERENCE_LENGTH = 8;

/** The reference of an order id: "05b0dd69-…" reads "05B0DD69". */
export function orderReference(orderId: string): string {
  return orderId.replace(/-/g, '').slice(0, ORDER_REFERENCE_LENGTH).toUpperCase();
}

/**
 * A reference as someone typed or read it out ("#05b0 dd69", "05B0-DD69") in its one spelling, or null when it is
 * not one (not 8 hex digits).
 */
export function parseOrderReference(text: string): string | null {
  const t = text.trim().replace(/^#/, '').replace(/[\s-]/g, '');
  return new RegExp(`^[0-9a-fA-F]{${ORDER_REFERENCE_LENGTH}}$`).test(t) ? t.toUpperCase() : null;
}
