// The page's own words in each fan language. The per-state queue copy is the event's (the promoter's words, or the
// defaults in @onsale/shared/queue/copy); everything else a fan reads is here.
import { FAN_LANGUAGES, negotiateLanguage, type FanLanguage } from '@onsale/shared/queue/copy';
// The money module alone (not the words index, which brings zod): the page stays small.
import { formatMoney } from '@onsale/shared/words/money';

export { FAN_LANGUAGES, negotiateLanguage, type FanLanguage };

const en = {
  languageName: 'English',
  language: 'Language',
  loading: 'Loading…',
  fairness: 'How the line is ordered',
  fairnessAudit: 'Check the published audit',
  opensAt: (when: string) => `On sale ${when}`,
  startsAt: (when: string) => `Show: ${when}`,
  // sign-in
  signInTitle: 'Sign in to join the line',
  signInWhy: 'Your place in line is tied to your account and this device.',
  signInWithProvider: 'Sign in',
  devSignIn: 'Development sign-in',
  devSignInHint: 'Any name works here; real fans sign in with the promoter’s account.',
  accountName: 'Your name for this try-out',
  signInButton: 'Sign in and continue',
  signingIn: 'Signing you in…',
  signedInAs: (who: string) => `Signed in as ${who}`,
  signOut: 'Sign out',
  signInFailed: (why: string) => `Sign-in did not work: ${why}. Try again.`,
  signInExpired: 'Your sign-in has expired. Sign in again: your place in line is kept.',
  // joining
  joinTitle: 'Join the line',
  joinButton: 'Join the line',
  joining: 'Joining the line…',
  challengeTitle: 'Checking your browser',
  challengeProgress: (pct: number) => `Checking your browser before you join: ${pct}% done`,
  challengeWhy: 'This takes a few seconds and happens once. It keeps automated buyers out of line.',
  // the line
  yourPlace: 'Your place in line',
  peopleAhead: (n: string) => `${n} ahead of you`,
  nobodyAhead: 'Nobody is ahead of you',
  placeAtOpen: 'You get your place when the sale opens',
  preopenExplain:
    'Everyone who joins before the open is in the same position: at the open each fan gets a random place, so there is no need to hurry or refresh.',
  opensIn: (t: string) => `The sale opens in ${t}`,
  estWait: (t: string) => `About ${t} to wait`,
  estWaitUnknown: 'Working out the wait…',
  placeAnnounce: (pos: string, ahead: string) => `Your place in line: ${pos}. ${ahead} ahead of you.`,
  checkingAgain: (s: number) => `Still in line. Checking again in ${s} s.`,
  busy: 'The site is very busy right now; you have not lost your place.',
  offline: 'We cannot reach the site right now; you have not lost your place.',
  positionExpired: 'Your turn came while you were away and has passed. You can join again, at the back of the line.',
  joinAgain: 'Join again',
  wrongDevice: 'Your place in line was taken on another device. Continue there, or sign in with another account here.',
  placeMoved:
    'Your place in line moved to another device where you signed in with this account. Continue there; nothing is lost. To carry on here instead, bring it back.',
  moveHere: 'Bring my place back to this device',
  moveLimit: 'Your place has moved between devices as often as it can for this sale. Continue on the device that has it.',
  eventClosed: 'This show has started; the line is closed.',
  lotteryEvent: 'This sale is a registration lottery: fans register in advance and winners buy with their invitation.',
  progressLabel: 'Progress through the line',
  stateName: { WAITING: 'Waiting', PAUSED: 'Paused', ADMITTED: 'Your turn', LAST_CHANCE: 'Last chance', SOLD_OUT: 'Sold out' } as Record<
    string,
    string
  >,
  fairnessModes: {
    RANDOMIZED_PREOPEN_THEN_FIFO: 'Everyone in line before the open gets a random place at the open; after that, first come, first served.',
    FIFO: 'First come, first served.',
    REGISTRATION_LOTTERY: 'A draw among the fans who registered in advance.',
  } as Record<string, string>,
  // choosing seats
  admittedTitle: 'Choose your seats',
  admittedUntil: (t: string) => `Your turn lasts until ${t}.`,
  bestAvailable: 'Best available',
  pickSeats: 'Pick seats on the map',
  section: 'Section',
  quantity: 'Tickets',
  available: (n: string) => `${n} left`,
  soldOutSection: 'Sold out',
  each: (p: string) => `${p} each`,
  findSeats: 'Find my seats',
  finding: 'Finding the best seats…',
  seatsPicked: (n: number) => `${n} seat${n === 1 ? '' : 's'} chosen`,
  holdPicked: 'Hold these seats',
  seatMapOpensAt: (t: string) => `You can pick exact seats on the map from ${t}.`,
  seatMapHelp: 'Choose your seats; taken seats are greyed out. A wide section scrolls sideways inside its box.',
  seat: (row: string, n: number) => `Row ${row}, seat ${n}`,
  seatPriced: (row: string, n: number, price: string) => `Row ${row}, seat ${n}, ${price}`,
  seatGone: (row: string, n: number) => `Row ${row}, seat ${n}, taken`,
  seatGridLabel: (section: string, price: string) =>
    `Seats in ${section}, ${price} each. The stage is at the top. Use the arrow keys to move, Space to choose.`,
  stage: 'Stage',
  seatFree: 'Free',
  seatChosen: 'Yours',
  seatTaken: 'Taken',
  limitNote: (n: number) => `Up to ${n} tickets per fan.`,
  // a party that cannot sit together, and a pick that would leave a seat on its own
  notTogether: (n: number) => `There are no ${n} seats together left in that section. You can still have:`,
  splitOffer: (parts: string, where: string) => `${parts} seats, in groups side by side: ${where}`,
  seatRun: (row: string, from: number, to: number) => (from === to ? `row ${row} seat ${from}` : `row ${row} seats ${from}-${to}`),
  fewerTogether: (n: number) => `${n} seat${n === 1 ? '' : 's'} together`,
  otherSections: 'Or another section:',
  holdInstead: (where: string) => `Hold ${where}`,
  // hold
  holdTitle: 'Your seats are held',
  holdCountdown: (t: string) => `Held for you for ${t}`,
  holdExtended: 'Extended once while you pay.',
  holdEndingSoon: 'One minute left: pay now to keep these seats.',
  seatLine: (section: string, row: string, n: number) => `Section ${section}, row ${row}, seat ${n}`,
  unitsLine: (section: string, q: number) => `${q} × ${section} (general admission)`,
  total: 'Total',
  continueToPay: 'Continue to payment',
  release: 'Let these seats go',
  released: 'The seats are back on sale. You can choose again while your turn lasts.',
  // payment
  payTitle: 'Pay',
  cardNumber: 'Card number',
  expiry: 'Expiry (MM/YY)',
  payButton: (amount: string) => `Pay ${amount}`,
  paying: 'Paying…',
  testCards: 'Test cards (development only)',
  testCardOk: 'pays',
  testCardDeclined: 'is declined',
  // order
  orderTitle: 'You have tickets',
  orderNumber: (id: string) => `Order reference ${id}`,
  orderSeats: (n: number) => `${n} ticket${n === 1 ? '' : 's'}`,
  orderPaid: (amount: string) => `Paid ${amount}`,
  orderShow: 'Show',
  orderWhen: 'When',
  orderWhere: 'Where',
  venueClock: (time: string) => `${time}, the venue's local time`,
  ticketsArriveTitle: 'How your tickets arrive',
  ticketsArrive: (who: string) =>
    `Your tickets belong to your account (${who}): open this page and sign in with it to find them, and to show them at the door. Nothing is posted.`,
  keepReference: 'Keep the order reference: it is how the box office and fan support find your order.',
  addToCalendar: 'Add to my calendar (.ics)',
  // refusals, in plain words with the next step
  refused: {
    ACCOUNT_LIMIT_EXCEEDED:
      'You already hold or have bought the most tickets one fan may have for this show. Pay for the seats you hold, or choose fewer.',
    DEVICE_LIMIT_EXCEEDED: 'This device already holds or has bought the most tickets allowed for this show. Choose fewer.',
    SECTION_NEARLY_FULL: 'There are not enough seats together left in that section. Try one of these instead:',
    SECTION_SOLD_OUT: 'That section has sold out. Choose another section.',
    GA_QUANTITY_UNAVAILABLE: 'There are not that many tickets left in that section. Choose fewer, or another section.',
    SEATS_UNAVAILABLE: 'Someone else took one of those seats a moment ago. Choose other seats.',
    SINGLE_SEAT_LEFT:
      'Those seats would leave one seat on its own, which nobody could then buy with a friend. Take the seats beside it instead:',
    SEAT_PICKING_NOT_OPEN: 'Picking exact seats has not opened yet. Use best available for now.',
    ONSALE_NOT_OPEN: 'The sale has not opened yet.',
    HOLD_EXPIRED: 'Your hold ran out and the seats went back on sale. Choose again while your turn lasts.',
    HOLD_RELEASED: 'These seats were let go. Choose again while your turn lasts.',
    HOLD_LOST: 'Your hold was lost in a brief fault on our side and nothing was charged. Choose your seats again: your turn still lasts.',
    HOLD_ALREADY_EXTENDED: 'Your hold has already been extended once.',
    EXTENSION_NOT_OFFERED: 'This show does not extend holds; pay before the time runs out.',
    PAYMENT_DECLINED: 'Your card was declined. Your seats are still held: try another card.',
    INSTRUMENT_LIMIT_EXCEEDED: 'This card has already paid for the most tickets one card may buy for this show. Use another card.',
    CARD_NOT_ELIGIBLE: 'This card cannot be used for this sale. Use another card.',
    PAYMENT_GATEWAY_BUSY: 'The payment service is busy. Nothing was charged; we will try again in a moment.',
    CHECKOUT_IN_PROGRESS: 'Your payment is still going through. Please wait.',
    ADMISSION_REQUIRED: 'Your turn to choose seats has ended. Join the line again.',
    TOKEN_EXPIRED: 'Your turn to choose seats has ended. Join the line again.',
    OFFER_EXPIRED: 'This offer has run out; the seats went to the next fan. You are still on the waitlist.',
    CLAIM_TOKEN_EXPIRED: 'This offer has run out; the seats went to the next fan. You are still on the waitlist.',
    OFFER_ALREADY_CLAIMED: 'You have already claimed this offer.',
    OFFER_SEATS_GONE: 'Another fan claimed these seats first. You are still on the waitlist.',
    OFFER_DECLINED: 'You turned this offer down.',
    QUANTITY_ABOVE_LIMIT: 'That is more tickets than one fan may buy for this show.',
    RATE_LIMITED: 'Too many tries in a short time. Wait a moment and try again.',
    TICKET_OTHER_DEVICE: 'This ticket is on another of your devices. Show it there, or move it to this one.',
    TICKET_NOT_DELIVERED: 'Your ticket has not arrived yet: its code appears here on the delivery date.',
    DEVICE_MOVES_EXHAUSTED: 'This ticket has been moved between devices as often as allowed. Fan support can move it for you.',
    TICKET_NOT_HELD: 'This ticket is no longer yours: it was passed on or sold.',
    TICKET_LISTED: 'This ticket is listed for resale. Withdraw the listing first.',
    TICKET_NOT_ACTIVE: 'This ticket can no longer be used, passed on or sold.',
    TRANSFER_LIMIT_REACHED:
      'This ticket has been passed on as many times as the show allows, or your friend already has the most tickets one fan may hold.',
    TRANSFER_RECIPIENT_NOT_FOUND: 'There is no account with that id. Ask your friend for the account id shown on their page.',
    TRANSFER_TO_SELF: 'That is your own account.',
    RESALE_DISABLED: 'This show does not offer resale.',
    RESALE_IN_PROGRESS: 'A fan is paying for this ticket right now; it can no longer be withdrawn.',
    EVENT_STARTED: 'The show has started: tickets can no longer be passed on or sold.',
  } as Record<string, string>,
  somethingWrong: (msg: string) => `That did not work: ${msg}`,
  tryAgain: 'Try again',
  // waitlist
  waitlistTitle: 'Join the waitlist',
  waitlistExplain:
    'Seats that come back (unpaid holds, cancellations) are offered to fans on the waitlist in the order they joined, not to whoever refreshes fastest.',
  wlDateFrom: 'From date',
  wlDateTo: 'To date',
  wlMaxPrice: 'Highest price per ticket',
  wlAnyPrice: 'Any price',
  wlQuantity: 'Tickets together',
  wlSections: 'Sections you would take',
  wlAnySection: 'Any section',
  wlJoin: 'Join the waitlist',
  wlUpdate: 'Update my waitlist place',
  wlLeave: 'Leave the waitlist',
  wlPlace: (place: string, of: string) => `You are number ${place} of ${of} on the waitlist for seats like these.`,
  wlJoined: 'You are on the waitlist. Keep this page open, or come back: offers also appear here.',
  wlLeft: 'You have left the waitlist.',
  wlExpires: (t: string) => `Your place lasts until ${t}.`,
  notifications: 'Offers and news',
  noNotifications: 'Nothing yet. We check every few seconds while this page is open.',
  offerTitle: (n: number) => `${n} seat${n === 1 ? '' : 's'} for you`,
  offerDeadline: (t: string) => `Claim within ${t}`,
  claim: 'Claim these seats',
  decline: 'No thanks',
  claimed: 'The seats are yours to pay for.',
  offerGone: 'This offer has ended.',
  // my tickets
  ticketsTitle: 'My tickets',
  ticketsNoneHeld: 'You no longer hold a ticket for this show.',
  ticketsNone: 'This account holds no tickets for this show.',
  ticketArrives: (when: string) => `Your ticket arrives on ${when}. The code to show at the door appears here then.`,
  ticketQrLabel: 'Your ticket code for the door. It changes every 15 seconds: a screenshot will not get you in.',
  ticketCodeChanges: (s: number) => `Live code: changes in ${s} s. Show this screen at the door.`,
  ticketCodeAsText: 'Show the code as text',
  ticketMoveHere: 'Move this ticket to this device',
  ticketTransfer: 'Give to a friend',
  ticketTransferExplain: 'Your friend gets the ticket in their account at once; your code stops working.',
  ticketTransfersLeft: (n: number) => `${n} transfer${n === 1 ? '' : 's'} left for this ticket.`,
  ticketFriend: 'Your friend’s account id',
  ticketFriendMissing: 'Enter your friend’s account id.',
  ticketTransferSend: 'Give this ticket',
  ticketTransferred: (who: string) => `The ticket is now ${who}’s.`,
  ticketResale: 'Can’t go? Sell at face value',
  ticketResaleExplain: 'The ticket goes first to fans on the waitlist, in the order they joined. You are paid when one buys it.',
  ticketFaceValue: (p: string) => `Face value ${p}.`,
  ticketResaleCap: (p: string) => `You can ask at most ${p}.`,
  ticketPrice: (currency: string) => `Your price (${currency})`,
  ticketPriceInvalid: 'Enter a price, for example 65.00.',
  ticketResaleSend: 'List this ticket',
  ticketListed: 'Your ticket is listed. It is offered to the waitlist first; you can withdraw it until someone buys it.',
  ticketListedFor: (p: string) => `Listed for ${p}: offered to fans on the waitlist.`,
  ticketWithdraw: 'Withdraw the listing',
  ticketWithdrawn: 'The listing is withdrawn; the ticket is yours again.',
  ticketStatus: {
    PENDING_DELIVERY: 'Arriving soon',
    ACTIVE: 'Ready',
    LISTED: 'Listed for resale',
    TRANSFERRED: 'Given to a friend',
    RESOLD: 'Sold on the exchange',
    REVOKED: 'No longer valid',
    ADMITTED: 'Used: you are in. Enjoy the show.',
  } as Record<string, string>,
} as const;

export type Strings = {
  [K in keyof typeof en]: (typeof en)[K] extends (...a: infer A) => string
    ? (...a: A) => string
    : (typeof en)[K] extends string
      ? string
      : (typeof en)[K];
};

const es: Strings = {
  languageName: 'Español',
  language: 'Idioma',
  loading: 'Cargando…',
  fairness: 'Cómo se ordena la fila',
  fairnessAudit: 'Ver la auditoría publicada',
  opensAt: (when) => `A la venta ${when}`,
  startsAt: (when) => `Función: ${when}`,
  signInTitle: 'Inicia sesión para entrar en la fila',
  signInWhy: 'Tu lugar en la fila está ligado a tu cuenta y a este dispositivo.',
  signInWithProvider: 'Iniciar sesión',
  devSignIn: 'Inicio de sesión de desarrollo',
  devSignInHint: 'Aquí vale cualquier nombre; los fans reales inician sesión con la cuenta del promotor.',
  accountName: 'Tu nombre para esta prueba',
  signInButton: 'Iniciar sesión y continuar',
  signingIn: 'Iniciando sesión…',
  signedInAs: (who) => `Sesión iniciada como ${who}`,
  signOut: 'Cerrar sesión',
  signInFailed: (why) => `No se pudo iniciar sesión: ${why}. Inténtalo de nuevo.`,
  signInExpired: 'Tu sesión ha caducado. Vuelve a iniciarla: conservas tu lugar en la fila.',
  joinTitle: 'Entra en la fila',
  joinButton: 'Entrar en la fila',
  joining: 'Entrando en la fila…',
  challengeTitle: 'Comprobando tu navegador',
  challengeProgress: (pct) => `Comprobando tu navegador antes de entrar: ${pct}% hecho`,
  challengeWhy: 'Tarda unos segundos y solo ocurre una vez. Mantiene fuera de la fila a los compradores automáticos.',
  yourPlace: 'Tu lugar en la fila',
  peopleAhead: (n) => `${n} por delante de ti`,
  nobodyAhead: 'No hay nadie por delante de ti',
  placeAtOpen: 'Recibirás tu lugar cuando abra la venta',
  preopenExplain:
    'Todos los que entran antes de la apertura están en la misma situación: al abrir, cada fan recibe un lugar al azar, así que no hace falta correr ni recargar.',
  opensIn: (t) => `La venta abre en ${t}`,
  estWait: (t) => `Unos ${t} de espera`,
  estWaitUnknown: 'Calculando la espera…',
  placeAnnounce: (pos, ahead) => `Tu lugar en la fila: ${pos}. ${ahead} por delante de ti.`,
  checkingAgain: (s) => `Sigues en la fila. Volvemos a comprobar en ${s} s.`,
  busy: 'El sitio está muy ocupado ahora mismo; no has perdido tu lugar.',
  offline: 'No podemos conectar con el sitio ahora mismo; no has perdido tu lugar.',
  positionExpired: 'Tu turno llegó mientras no estabas y ya ha pasado. Puedes volver a entrar, al final de la fila.',
  joinAgain: 'Volver a entrar',
  wrongDevice: 'Tu lugar en la fila se tomó en otro dispositivo. Continúa allí, o inicia sesión aquí con otra cuenta.',
  placeMoved:
    'Tu lugar en la fila pasó a otro dispositivo donde iniciaste sesión con esta cuenta. Continúa allí; no pierdes nada. Para seguir aquí, tráelo de vuelta.',
  moveHere: 'Traer mi lugar a este dispositivo',
  moveLimit: 'Tu lugar ya ha cambiado de dispositivo todas las veces posibles en esta venta. Continúa en el dispositivo que lo tiene.',
  eventClosed: 'La función ya ha empezado; la fila está cerrada.',
  lotteryEvent: 'Esta venta es un sorteo con registro previo: los fans se registran y los ganadores compran con su invitación.',
  progressLabel: 'Avance en la fila',
  stateName: { WAITING: 'En espera', PAUSED: 'En pausa', ADMITTED: 'Es tu turno', LAST_CHANCE: 'Última oportunidad', SOLD_OUT: 'Agotado' },
  fairnessModes: {
    RANDOMIZED_PREOPEN_THEN_FIFO:
      'Quienes están en la fila antes de la apertura reciben un lugar al azar al abrir; después, por orden de llegada.',
    FIFO: 'Por orden de llegada.',
    REGISTRATION_LOTTERY: 'Un sorteo entre los fans que se registraron antes.',
  },
  admittedTitle: 'Elige tus asientos',
  admittedUntil: (t) => `Tu turno dura hasta las ${t}.`,
  bestAvailable: 'Mejores disponibles',
  pickSeats: 'Elegir en el mapa',
  section: 'Sección',
  quantity: 'Entradas',
  available: (n) => `Quedan ${n}`,
  soldOutSection: 'Agotada',
  each: (p) => `${p} cada una`,
  findSeats: 'Buscar mis asientos',
  finding: 'Buscando los mejores asientos…',
  seatsPicked: (n) => `${n} asiento${n === 1 ? '' : 's'} elegido${n === 1 ? '' : 's'}`,
  holdPicked: 'Reservar estos asientos',
  seatMapOpensAt: (t) => `Podrás elegir asientos concretos en el mapa desde las ${t}.`,
  seatMapHelp: 'Elige tus asientos; los ocupados aparecen en gris. Una sección ancha se desplaza de lado dentro de su recuadro.',
  seat: (row, n) => `Fila ${row}, asiento ${n}`,
  seatPriced: (row, n, price) => `Fila ${row}, asiento ${n}, ${price}`,
  seatGone: (row, n) => `Fila ${row}, asiento ${n}, ocupado`,
  seatGridLabel: (section, price) =>
    `Asientos de ${section}, ${price} cada uno. El escenario está arriba. Muévete con las flechas y elige con la barra espaciadora.`,
  stage: 'Escenario',
  seatFree: 'Libre',
  seatChosen: 'Tuyo',
  seatTaken: 'Ocupado',
  limitNote: (n) => `Hasta ${n} entradas por fan.`,
  notTogether: (n) => `No quedan ${n} asientos juntos en esa sección. Aún puedes tener:`,
  splitOffer: (parts, where) => `${parts} asientos, en grupos de asientos juntos: ${where}`,
  seatRun: (row, from, to) => (from === to ? `fila ${row} asiento ${from}` : `fila ${row} asientos ${from}-${to}`),
  fewerTogether: (n) => `${n} asiento${n === 1 ? '' : 's'} junto${n === 1 ? '' : 's'}`,
  otherSections: 'U otra sección:',
  holdInstead: (where) => `Reservar ${where}`,
  holdTitle: 'Tus asientos están reservados',
  holdCountdown: (t) => `Reservados para ti durante ${t}`,
  holdExtended: 'Ampliada una vez mientras pagas.',
  holdEndingSoon: 'Queda un minuto: paga ahora para conservar estos asientos.',
  seatLine: (section, row, n) => `Sección ${section}, fila ${row}, asiento ${n}`,
  unitsLine: (section, q) => `${q} × ${section} (entrada general)`,
  total: 'Total',
  continueToPay: 'Continuar al pago',
  release: 'Liberar estos asientos',
  released: 'Los asientos vuelven a estar a la venta. Puedes elegir de nuevo mientras dure tu turno.',
  payTitle: 'Pagar',
  cardNumber: 'Número de tarjeta',
  expiry: 'Caducidad (MM/AA)',
  payButton: (amount) => `Pagar ${amount}`,
  paying: 'Pagando…',
  testCards: 'Tarjetas de prueba (solo en desarrollo)',
  testCardOk: 'paga',
  testCardDeclined: 'se rechaza',
  orderTitle: 'Ya tienes tus entradas',
  orderNumber: (id) => `Referencia del pedido ${id}`,
  orderSeats: (n) => `${n} entrada${n === 1 ? '' : 's'}`,
  orderPaid: (amount) => `Pagado ${amount}`,
  orderShow: 'Función',
  orderWhen: 'Cuándo',
  orderWhere: 'Dónde',
  venueClock: (time) => `${time}, hora local del recinto`,
  ticketsArriveTitle: 'Cómo te llegan las entradas',
  ticketsArrive: (who) =>
    `Tus entradas pertenecen a tu cuenta (${who}): abre esta página e inicia sesión con ella para verlas y mostrarlas en la puerta. No se envía nada por correo postal.`,
  keepReference: 'Guarda la referencia del pedido: con ella la taquilla y la atención al fan encuentran tu pedido.',
  addToCalendar: 'Añadir a mi calendario (.ics)',
  refused: {
    ACCOUNT_LIMIT_EXCEEDED:
      'Ya tienes reservadas o compradas todas las entradas que un fan puede tener para esta función. Paga las que tienes o elige menos.',
    DEVICE_LIMIT_EXCEEDED: 'Este dispositivo ya tiene el máximo de entradas permitido para esta función. Elige menos.',
    SECTION_NEARLY_FULL: 'No quedan suficientes asientos juntos en esa sección. Prueba una de estas:',
    SECTION_SOLD_OUT: 'Esa sección está agotada. Elige otra.',
    GA_QUANTITY_UNAVAILABLE: 'No quedan tantas entradas en esa sección. Elige menos u otra sección.',
    SEATS_UNAVAILABLE: 'Otra persona acaba de coger uno de esos asientos. Elige otros.',
    SINGLE_SEAT_LEFT: 'Esos asientos dejarían un asiento suelto que nadie podría comprar acompañado. Coge los de al lado:',
    SEAT_PICKING_NOT_OPEN: 'Aún no se pueden elegir asientos concretos. Usa mejores disponibles por ahora.',
    ONSALE_NOT_OPEN: 'La venta aún no ha abierto.',
    HOLD_EXPIRED: 'Tu reserva caducó y los asientos volvieron a la venta. Elige de nuevo mientras dure tu turno.',
    HOLD_RELEASED: 'Estos asientos se liberaron. Elige de nuevo mientras dure tu turno.',
    HOLD_LOST: 'Tu reserva se perdió por un fallo breve de nuestra parte y no se cobró nada. Elige tus asientos de nuevo: tu turno sigue.',
    HOLD_ALREADY_EXTENDED: 'Tu reserva ya se amplió una vez.',
    EXTENSION_NOT_OFFERED: 'Esta función no amplía reservas; paga antes de que acabe el tiempo.',
    PAYMENT_DECLINED: 'Tu tarjeta fue rechazada. Tus asientos siguen reservados: prueba con otra tarjeta.',
    INSTRUMENT_LIMIT_EXCEEDED: 'Esta tarjeta ya pagó el máximo de entradas por tarjeta para esta función. Usa otra.',
    CARD_NOT_ELIGIBLE: 'Esta tarjeta no sirve para esta venta. Usa otra.',
    PAYMENT_GATEWAY_BUSY: 'El servicio de pago está ocupado. No se ha cobrado nada; lo intentaremos de nuevo en un momento.',
    CHECKOUT_IN_PROGRESS: 'Tu pago aún se está procesando. Espera, por favor.',
    ADMISSION_REQUIRED: 'Tu turno para elegir asientos ha terminado. Vuelve a entrar en la fila.',
    TOKEN_EXPIRED: 'Tu turno para elegir asientos ha terminado. Vuelve a entrar en la fila.',
    OFFER_EXPIRED: 'Esta oferta ha caducado; los asientos pasaron al siguiente fan. Sigues en la lista de espera.',
    CLAIM_TOKEN_EXPIRED: 'Esta oferta ha caducado; los asientos pasaron al siguiente fan. Sigues en la lista de espera.',
    OFFER_ALREADY_CLAIMED: 'Ya reclamaste esta oferta.',
    OFFER_SEATS_GONE: 'Otro fan reclamó estos asientos antes. Sigues en la lista de espera.',
    OFFER_DECLINED: 'Rechazaste esta oferta.',
    QUANTITY_ABOVE_LIMIT: 'Son más entradas de las que un fan puede comprar para esta función.',
    RATE_LIMITED: 'Demasiados intentos en poco tiempo. Espera un momento y vuelve a intentarlo.',
    TICKET_OTHER_DEVICE: 'Esta entrada está en otro de tus dispositivos. Enséñala allí o pásala a este.',
    TICKET_NOT_DELIVERED: 'Tu entrada aún no ha llegado: su código aparecerá aquí en la fecha de entrega.',
    DEVICE_MOVES_EXHAUSTED:
      'Esta entrada ya se ha cambiado de dispositivo todas las veces permitidas. Atención al fan puede cambiarla por ti.',
    TICKET_NOT_HELD: 'Esta entrada ya no es tuya: se transfirió o se vendió.',
    TICKET_LISTED: 'Esta entrada está a la venta. Retírala primero.',
    TICKET_NOT_ACTIVE: 'Esta entrada ya no se puede usar, transferir ni vender.',
    TRANSFER_LIMIT_REACHED:
      'Esta entrada ya se transfirió todas las veces que permite la función, o tu amigo ya tiene el máximo de entradas por fan.',
    TRANSFER_RECIPIENT_NOT_FOUND: 'No hay ninguna cuenta con ese id. Pide a tu amigo el id de cuenta que aparece en su página.',
    TRANSFER_TO_SELF: 'Es tu propia cuenta.',
    RESALE_DISABLED: 'Esta función no ofrece reventa.',
    RESALE_IN_PROGRESS: 'Un fan está pagando esta entrada ahora mismo; ya no se puede retirar.',
    EVENT_STARTED: 'La función ha empezado: las entradas ya no se pueden transferir ni vender.',
  },
  somethingWrong: (msg) => `No ha funcionado: ${msg}`,
  tryAgain: 'Reintentar',
  waitlistTitle: 'Únete a la lista de espera',
  waitlistExplain:
    'Los asientos que vuelven (reservas sin pagar, cancelaciones) se ofrecen a los fans de la lista por orden de llegada, no a quien recarga más rápido.',
  wlDateFrom: 'Desde',
  wlDateTo: 'Hasta',
  wlMaxPrice: 'Precio máximo por entrada',
  wlAnyPrice: 'Cualquier precio',
  wlQuantity: 'Entradas juntas',
  wlSections: 'Secciones que aceptarías',
  wlAnySection: 'Cualquier sección',
  wlJoin: 'Unirme a la lista de espera',
  wlUpdate: 'Actualizar mi lugar en la lista',
  wlLeave: 'Salir de la lista de espera',
  wlPlace: (place, of) => `Eres el número ${place} de ${of} en la lista de espera para asientos como estos.`,
  wlJoined: 'Estás en la lista de espera. Mantén esta página abierta o vuelve luego: las ofertas también aparecen aquí.',
  wlLeft: 'Has salido de la lista de espera.',
  wlExpires: (t) => `Tu lugar dura hasta el ${t}.`,
  notifications: 'Ofertas y avisos',
  noNotifications: 'Nada todavía. Lo comprobamos cada pocos segundos mientras esta página esté abierta.',
  offerTitle: (n) => `${n} asiento${n === 1 ? '' : 's'} para ti`,
  offerDeadline: (t) => `Reclámalo en ${t}`,
  claim: 'Reclamar estos asientos',
  decline: 'No, gracias',
  claimed: 'Los asientos son tuyos; solo falta pagar.',
  offerGone: 'Esta oferta ha terminado.',
  ticketsTitle: 'Mis entradas',
  ticketsNoneHeld: 'Ya no tienes entradas para esta función.',
  ticketsNone: 'Esta cuenta no tiene entradas para esta función.',
  ticketArrives: (when) => `Tu entrada llega el ${when}. El código para la puerta aparecerá aquí entonces.`,
  ticketQrLabel: 'El código de tu entrada para la puerta. Cambia cada 15 segundos: una captura de pantalla no sirve.',
  ticketCodeChanges: (s) => `Código en vivo: cambia en ${s} s. Enseña esta pantalla en la puerta.`,
  ticketCodeAsText: 'Ver el código como texto',
  ticketMoveHere: 'Pasar esta entrada a este dispositivo',
  ticketTransfer: 'Dársela a un amigo',
  ticketTransferExplain: 'Tu amigo recibe la entrada en su cuenta al momento; tu código deja de valer.',
  ticketTransfersLeft: (n) => `Quedan ${n} transferencia${n === 1 ? '' : 's'} para esta entrada.`,
  ticketFriend: 'El id de cuenta de tu amigo',
  ticketFriendMissing: 'Escribe el id de cuenta de tu amigo.',
  ticketTransferSend: 'Dar esta entrada',
  ticketTransferred: (who) => `La entrada ahora es de ${who}.`,
  ticketResale: '¿No puedes ir? Véndela a precio original',
  ticketResaleExplain: 'La entrada se ofrece primero a la lista de espera, por orden de llegada. Cobras cuando alguien la compra.',
  ticketFaceValue: (p) => `Precio original ${p}.`,
  ticketResaleCap: (p) => `Puedes pedir como mucho ${p}.`,
  ticketPrice: (currency) => `Tu precio (${currency})`,
  ticketPriceInvalid: 'Escribe un precio, por ejemplo 65.00.',
  ticketResaleSend: 'Poner a la venta',
  ticketListed: 'Tu entrada está a la venta. Se ofrece primero a la lista de espera; puedes retirarla hasta que alguien la compre.',
  ticketListedFor: (p) => `A la venta por ${p}: se ofrece a la lista de espera.`,
  ticketWithdraw: 'Retirar de la venta',
  ticketWithdrawn: 'Has retirado la entrada de la venta; vuelve a ser tuya.',
  ticketStatus: {
    PENDING_DELIVERY: 'Llega pronto',
    ACTIVE: 'Lista',
    LISTED: 'A la venta',
    TRANSFERRED: 'Dada a un amigo',
    RESOLD: 'Vendida en la reventa oficial',
    REVOKED: 'Ya no es válida',
    ADMITTED: 'Usada: ya estás dentro. Disfruta.',
  },
};

export const STRINGS: Record<FanLanguage, Strings> = { en: en, es };

const LOCALES: Record<FanLanguage, string> = { en: 'en-GB', es: 'es-ES' };

/**
 * The viewer's locale for numbers, money and dates in the page's language: the browser's own preference when it is
 * in that language (en-US, es-MX), else the language's default. A US fan reads "$25.00" and "£25.00", a British fan
 * "US$25.00" and "£25.00": the currency is always the event's, the way it is written is the viewer's.
 */
export function viewerLocale(
  lang: FanLanguage,
  preferred: readonly string[] = typeof navigator === 'undefined' ? [] : navigator.languages,
): string {
  const mine = preferred.find((tag) => tag.toLowerCase().split('-')[0] === lang && tag.includes('-'));
  if (mine) {
    try {
      return Intl.getCanonicalLocales(mine)[0] ?? LOCALES[lang];
    } catch {
      // A malformed tag from the browser: the language's default.
    }
  }
  return LOCALES[lang];
}

/** Number, money and time formatting in the fan's language and the viewer's locale. */
export function formatters(lang: FanLanguage, locale: string = viewerLocale(lang)) {
  const number = new Intl.NumberFormat(locale);
  return {
    locale,
    number: (n: number) => number.format(n),
    /** Minor units in the event's currency (required: a missing one is how a GBP price read "US$25.00"). */
    money: (minorUnits: number, currency: string) => formatMoney(minorUnits, currency, locale),
    time: (d: Date, timeZone?: string) => d.toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit', timeZone }),
    /** "Thu 3 Dec, 19:30"; on a time zone's clock when given, and naming the zone with `withZone`. */
    dateTime: (d: Date, timeZone?: string, withZone = false) =>
      d.toLocaleString(locale, {
        weekday: 'short',
        day: 'numeric',
        month: 'short',
        hour: '2-digit',
        minute: '2-digit',
        timeZone,
        ...(withZone && timeZone ? { timeZoneName: 'short' as const } : {}),
      }),
    /** "Friday 15 January 2027" on the venue's calendar. */
    longDate: (d: Date, timeZone: string) =>
      d.toLocaleDateString(locale, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone }),
    /** "19:30 GMT" on the venue's clock, with its zone. */
    venueTime: (d: Date, timeZone: string) =>
      d.toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit', timeZone, timeZoneName: 'short' }),
    /** "4:05", "1:02:03" */
    clock: (seconds: number) => {
      const s = Math.max(0, Math.ceil(seconds));
      const h = Math.floor(s / 3600);
      const m = Math.floor((s % 3600) / 60);
      const r = String(s % 60).padStart(2, '0');
      return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${r}` : `${m}:${r}`;
    },
    /** "about 3 minutes", "under a minute" */
    duration: (seconds: number) => {
      const m = Math.round(seconds / 60);
      if (lang === 'es') return seconds < 60 ? 'menos de un minuto' : m < 60 ? `${m} min` : `${Math.round((m / 60) * 10) / 10} h`;
      return seconds < 60 ? 'under a minute' : m < 60 ? `${m} min` : `${Math.round((m / 60) * 10) / 10} h`;
    },
  };
}
export type Formatters = ReturnType<typeof formatters>;

/** The page's language: the fan's choice on this device, else what the browser asks for (its Accept-Language). */
export function initialLanguage(): FanLanguage {
  const chosen = typeof localStorage === 'undefined' ? null : localStorage.getItem('onsale.language');
  if (chosen && (FAN_LANGUAGES as readonly string[]).includes(chosen)) return chosen as FanLanguage;
  return negotiateLanguage(typeof navigator === 'undefined' ? null : navigator.languages);
}
