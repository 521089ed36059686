package phantom

import (
	"slices"
	"strings"
)

// A language is what Check knows of one language: the words that name a
// completed change, and the small words around them that make a sentence
// a claim or keep it from being one. Word lists are space-separated and
// lower case.
type language struct {
	code string

	// A change word is one of forms, or starts with one of stems and ends
	// with one of past: a past tense or participle of a verb that changes
	// something in an application ("deleted", "gelöscht", "supprimée",
	// "usunięto").
	stems, past, forms string

	// firstSuffix are endings of a change word that say the speaker did it
	// (Spanish "eliminé", Portuguese "apaguei", Polish "usunąłem");
	// impersonal are endings that make it a passive (Polish "usunięto").
	firstSuffix, impersonal string

	first    string // subjects and auxiliaries of a first-person past: "i", "i've", "ich", "j'ai"
	passive  string // auxiliaries of a passive or a state: "been", "was", "wurde", "été"
	negation string // "not", "nothing", "nicht", "pas"
	modal    string // future, modal, condition, request: "will", "would", "if", "wenn"
	read     string // words that say a sentence reports a record: "ago", "according", "twice"
	agent    string // the passive's "by": "by", "von", "par"
	target   string // prepositions of a target date: "for", "to", "auf", "pour"
	dates    string // month and weekday names, and their stems
	done     string // done markers that open a sentence: "done", "all set", "erledigt"
	softener string // words that may come before a done marker: "okay", "great"
	finite   string // verbs that make a leading participle an adjective: "are", "sind"
	breaks   string // conjunctions that start a new clause: "but", "aber"
	success  string // "successfully", "erfolgreich"
	await    string // words that say a change waits for someone: "approval", "pending"
	notPast  string // endings of other tenses that past would match: Spanish future "eliminaré"
	articles string // what follows an agent's "by" when it names one: "the", "der"
	common   string // other frequent small words, for guessing the language
}

var languages = []language{{
	code: "en",
	stems: "delet remov creat add updat chang renam mov cancel restart reboot stop start deploy redeploy scal " +
		"approv book rebook refund archiv unarchiv assign reassign enabl disabl merg publish unpublish revok " +
		"reschedul clos reopen paus resum invit block unblock mark tag push roll revert purg clear empti shar " +
		"unsubscrib subscrib void declin activat deactivat reactivat upgrad downgrad rotat suspend sav issu " +
		"transition rais lower install uninstall upload post forward transferr charg order schedul configur " +
		"fix patch kill terminat provision grant appli execut renew extend restor recover sync lock unlock ban " +
		"unban mute unmute pin unpin attach detach link unlink connect disconnect accept reject dismiss resolv " +
		"complet finaliz sign enroll enrol register wip flush truncat dropp migrat promot demot replac edit " +
		"insert modifi adjust increas decreas reduc replie process cancell turn generat launch",
	past:    "ed",
	forms:   "sent resent re-sent set reset shut rebuilt built ran re-ran rerun paid cc'd",
	first:   "i i've we we've",
	passive: "been was were got gets now",
	negation: "not n't no nothing none never neither nor didn't haven't hasn't wasn't weren't couldn't can't " +
		"cannot won't isn't aren't don't doesn't wouldn't shouldn't failed unable without yet hadn't",
	modal: "will i'll we'll you'll it'll would could can should might may shall must going about if once when " +
		"unless whether let let's want need needs please before after until soon ready pending awaiting " +
		"waiting proposal proposed draft would've he'll she'll they'll had",
	read: "ago yesterday earlier previously last overnight times twice according logs log history shows show " +
		"showed audit since tonight usually automatically always normally typically generally permanently",
	agent:  "by",
	target: "for to until till by",
	dates: "january february march april may june july august september october november december " +
		"monday tuesday wednesday thursday friday saturday sunday jan feb mar apr jun jul aug sep sept oct nov dec",
	done:     "done|all set|all done|sorted|finished|success|completed|there you go|changes applied|voilà",
	softener: "okay ok great alright perfect sure good and so",
	finite:   "are is were was can can't will keep keeps have has stay stays remain remains cannot get gets",
	breaks:   "but although though however whereas",
	success:  "successfully",
	common:   "and the your with of my this that it",
	await:    "approval pending awaiting",
	articles: "the a an",
}, {
	code:  "de",
	stems: "aktualis storn archiv aktiv deaktiv reaktiv skal konfigur install deinstall mark block paus publiz migr repar reserv registr abonn eskal rot synchronis annull deploy",
	past:  "iert",
	forms: "gelöscht entfernt erstellt angelegt hinzugefügt geändert umbenannt verschoben gesendet versendet " +
		"verschickt gesandt abgeschickt gestartet neugestartet gestoppt ausgerollt bereitgestellt genehmigt " +
		"freigegeben gebucht erstattet zurückerstattet zugewiesen zurückgesetzt gemergt zusammengeführt " +
		"veröffentlicht widerrufen geschlossen wiedereröffnet gesetzt eingerichtet fortgesetzt eingeladen gesperrt " +
		"entsperrt gespeichert geleert geteilt abgemeldet angemeldet abgesagt eingetragen hinterlegt behoben " +
		"eingespielt hochgeladen überwiesen bezahlt vorgenommen erhöht gesenkt bereinigt ersetzt angepasst " +
		"ausgeführt durchgeführt umgestellt verlängert gekündigt ausgeschaltet eingeschaltet abgeschaltet " +
		"angeschaltet zurückgerollt verlegt aufgehoben ausgetragen zugeordnet übertragen versandt abgeschlossen " +
		"erneuert wiederhergestellt beantwortet weitergeleitet verknüpft angehängt beendet geleert geschickt " +
		"ausgetauscht getauscht erteilt entzogen gelöst storniert aktualisiert gemacht gelegt ausgelöst",
	first:    "ich wir habe hab haben",
	passive:  "wurde wurden worden ist sind jetzt nun",
	negation: "nicht nichts kein keine keinen keiner nie niemals noch ohne",
	modal: "werde werden wird würde würden kann kannst könnte könnten soll sollte sollen will möchte möchtest " +
		"wenn falls sobald bevor nachdem bitte darf dürfen muss müssen lass lasse vorbereitet freigabe " +
		"zustimmung bestätigung bestätige genehmigen entwurf wartet warten",
	read: "gestern vorgestern zuletzt vorhin letzte letzten letzter vor seit mal zweimal dreimal laut zufolge " +
		"verlauf logs log protokoll zeigt zeigen nacht morgens normalerweise automatisch immer regel",
	agent:  "von vom durch",
	target: "auf für bis zum zur",
	dates: "januar februar märz april mai juni juli august september oktober november dezember " +
		"montag dienstag mittwoch donnerstag freitag samstag sonntag",
	done:     "erledigt|fertig|geschafft|alles erledigt|erfolgreich erledigt",
	softener: "okay ok gut super alles klar prima perfekt",
	finite:   "werden sind ist bleiben bleibt können kann haben hat",
	breaks:   "aber jedoch doch sondern",
	success:  "erfolgreich",
	common:   "und der die das mit dein deine ihr ihre sie es ein eine auf",
	await:    "freigabe zustimmung genehmigung",
	articles: "der die das dem den einen einem einer",
}, {
	code: "fr",
	stems: "supprim effac retir cré ajout modifi renomm déplac envoy annul redémarr arrêt démarr déploy " +
		"redimensionn approuv valid réserv rembours archiv assign attribu réinitialis activ désactiv fusionn " +
		"publi révoqu replanifi reprogramm ferm paus invit bloqu débloqu marqu enregistr sauvegard vid partag " +
		"désabonn abonn résili décal programm planifi install désinstall corrig appliqu exécut transfér pay " +
		"chang rétabl restaur remplac libér lanc",
	past:     "é ée és ées",
	forms:    "mis mise mises remis remise rouvert rouverte désinscrit désinscrite repris reprise éteint allumé",
	first:    "j'ai je nous avons l'ai",
	passive:  "été est sont désormais maintenant",
	negation: "pas rien jamais aucun aucune n'ai n'a ne n'est non personne plus sans n'ont",
	modal: "vais va allons pourrais pourrait peux peut puis devrais dois voulez veux souhaitez si s'il quand " +
		"lorsque dès une avant serait seraient sera serez seront aurait approbation confirmer confirmez approuvez " +
		"brouillon attente préparé",
	read: "hier dernier dernière dernièrement depuis fois selon d'après historique journal journaux montre " +
		"indique nuit généralement automatiquement toujours normalement",
	agent:  "par",
	target: "pour à au jusqu'au jusqu'à",
	dates: "janvier février mars avril mai juin juillet août septembre octobre novembre décembre " +
		"lundi mardi mercredi jeudi vendredi samedi dimanche",
	done:     "c'est fait|fait|terminé|voilà c'est fait|c'est bon|c'est réglé|tout est fait",
	softener: "ok d'accord parfait super très bien et voilà",
	finite:   "sont est restent reste peuvent peut ont",
	breaks:   "mais cependant toutefois",
	success:  "succès",
	common:   "et le les des du que avec pour votre vos ton ta un une",
	await:    "approbation attente",
	articles: "le la les l' un une",
}, {
	code: "es",
	stems: "elimin borr quit cre añad agreg actualiz modific cambi renombr mov envi cancel anul reinici inici " +
		"despleg escal aprob reserv reembols archiv asign restablec activ desactiv habilit deshabilit fusion " +
		"public revoc reprogram cerr paus reanud invit bloque desbloque marc guard vaci compart suscri program " +
		"instal desinstal corrig aplic ejecut transfer pag devolv configur ajust gener",
	past:        "ado ada ados adas ido ida idos idas é í ó",
	forms:       "detuve detenido detenida desplegué revoqué marqué apliqué pagué reabierto reabierta devuelto devuelta resuelto resuelta puesto puesta hecho",
	firstSuffix: "é í",
	first:       "he hemos yo",
	passive:     "sido fue fueron está están quedó quedado queda se ahora ya",
	negation:    "no nada nunca ningún ninguna ni sin todavía aún",
	modal: "voy vamos puedo podría podrías debería quieres quiere quieras si cuando una antes sería será " +
		"serían pendiente aprobación aprueba confirma confirmar borrador preparado preparada",
	read:   "ayer anoche pasado pasada hace desde veces vez según historial registro registros muestra indica noche suelen suele normalmente automáticamente siempre generalmente",
	agent:  "por",
	target: "para hasta al",
	dates: "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre " +
		"lunes martes miércoles jueves viernes sábado domingo",
	done:     "listo|hecho|ya está|todo listo|completado",
	softener: "vale ok perfecto genial bien",
	finite:   "son es están está pueden puede quedan se suelen",
	breaks:   "pero sin embargo aunque",
	success:  "éxito correctamente",
	common:   "y el los del que con su sus tu tus un una",
	await:    "aprobación pendiente",
	articles: "el la los las un una",
	notPast:  "aré eré iré ará erá irá arás erás irás",
}, {
	code: "it",
	stems: "elimin cancell cre aggiorn modific cambi rinomin spost invi annull riavvi ferm avvi distribu " +
		"deploy scal approv prenot rimbors archivi assegn reimpost resett attiv disattiv abilit disabilit " +
		"pubblic revoc riprogramm invit blocc sblocc segn salv svuot programm install disinstall applic esegu " +
		"trasfer pag restitu unit accorp configur impost rilasci fiss gener",
	past:     "ato ata ati ate ito ita iti ite uto uta uti ute",
	forms:    "rimosso rimossa rimossi rimosse aggiunto aggiunta aggiunti aggiunte chiuso chiusa chiusi chiuse riaperto riaperta messo messa messi messe sospeso sospesa condiviso condivisa disiscritto corretto corretta risolto risolta spento spenta acceso accesa fatto",
	first:    "ho abbiamo l'ho io",
	passive:  "stato stata stati state è sono ora adesso",
	negation: "non nulla niente mai nessun nessuna nessuno senza ancora",
	modal: "posso potrei vuoi vuole se quando una prima sarà sarebbe sarebbero devo dovrei vado andrò " +
		"approvazione approva conferma confermare bozza preparato preparata attesa",
	read:   "ieri scorso scorsa fa volte volta secondo cronologia log registro mostra indica notte solito solitamente automaticamente sempre normalmente",
	agent:  "da",
	target: "per a al alle fino",
	dates: "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre " +
		"lunedì martedì mercoledì giovedì venerdì sabato domenica",
	done:     "fatto|ecco fatto|tutto fatto|completato|fatto tutto",
	softener: "ok perfetto bene certo",
	finite:   "sono è restano resta possono può hanno vengono viene",
	breaks:   "ma però tuttavia",
	success:  "successo",
	common:   "e il di che con del della per su tuo tua gli un una",
	await:    "approvazione attesa",
	articles: "il lo la i gli le un una",
}, {
	code: "pt",
	stems: "exclu apag remov cri adicion atualiz alter modific renome mov envi cancel reinici inici implant " +
		"escal aprov reserv reembols arquiv atribu redefin ativ desativ habilit desabilit mescl public revog " +
		"reagend fech paus retom convid bloque desbloque marc salv esvazi compartilh partilh agend instal " +
		"desinstal corrig aplic execut transfer pag resolv devolv configur ajust mud par anul ger",
	past:        "ado ada ados adas ido ida idos idas ído ída ídos ídas ei i",
	forms:       "reaberto reaberta pago paga feito feita posto posta excluí",
	firstSuffix: "ei i í",
	first:       "eu já acabei acabo",
	passive:     "foi foram está estão sido ficou ficaram agora",
	negation:    "não nada nunca nenhum nenhuma sem ainda",
	modal: "vou vamos posso poderia pode quer queira se quando assim antes será seria deve devo pendente " +
		"aprovação aprove confirme confirmar rascunho preparei preparado aguardando",
	read:   "ontem passado passada há desde vezes vez segundo conforme histórico registros registos mostra indica noite costumam costuma normalmente automaticamente sempre geralmente",
	agent:  "por pelo pela",
	target: "para até",
	dates: "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro " +
		"segunda terça quarta quinta sexta sábado domingo",
	done:     "pronto|feito|tudo certo|concluído|prontinho",
	softener: "ok perfeito certo ótimo bem",
	finite:   "são é ficam fica podem pode têm costumam",
	breaks:   "mas porém contudo",
	success:  "sucesso",
	common:   "e o do da dos das com que sua seu no na à um uma",
	await:    "aprovação pendente aguardando",
	articles: "o a os as um uma",
	notPast:  "arei erei irei ará erá irá",
}, {
	code: "pl",
	stems: "usun skasow utworz stworz doda zaktualizow aktualizow zmieni zmodyfikow przemianow przenios przenies " +
		"przesun wysła wysł anulow odwoła zrestartow restartow uruchomi zatrzyma wdroż przeskalow zatwierdzi " +
		"zarezerwow zwróci zwróc zarchiwizow przypisa zresetow włączy włącz wyłączy wyłącz scali połączy " +
		"opublikow unieważni cofn przełoży zamkn wstrzyma wznowi zaprosi zablokow odblokow oznaczy oznacz " +
		"zapisa wyczyści wyczyszcz opróżni udostępni wypisa zaplanow zainstalow odinstalow popraw zastosow " +
		"wykona przela zapłaci opłaci zleci załatwi przywróci przywróc zmergow wprowadzi skonfigurow ustawi zrealizow",
	past:        "łem łam liśmy łyśmy ny na ne no ni ty ta te to nych tych",
	firstSuffix: "łem łam liśmy łyśmy",
	impersonal:  "no to",
	first:       "właśnie już",
	passive:     "został została zostało zostały zostali jest są teraz",
	negation:    "nie nic niczego żadnych żadnej żadnego nigdy bez jeszcze",
	modal: "mogę mógłbym mogłabym możesz chcesz czy jeśli jeżeli gdy kiedy zanim gdyby by będzie zostanie " +
		"potrzebuje trzeba muszę należy zatwierdź potwierdź zatwierdzenie zgody szkic przygotowałem " +
		"przygotowałam czeka",
	read:   "wczoraj zeszłej zeszłym ostatnio ostatni temu od razy raz według wynika logów historii historia pokazuje nocy zwykle automatycznie zawsze",
	agent:  "przez",
	target: "na do",
	dates: "stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października listopada grudnia " +
		"styczeń luty marzec kwiecień maj czerwiec lipiec sierpień wrzesień październik listopad grudzień " +
		"poniedziałek wtorek środa czwartek piątek sobota niedziela poniedziałku wtorku środę czwartku piątku sobotę niedzielę",
	done:     "gotowe|zrobione|załatwione|wszystko załatwione|wykonane|wszystko gotowe",
	softener: "ok okej dobrze świetnie jasne super",
	finite:   "są jest pozostają mogą może mają",
	breaks:   "ale jednak lecz",
	success:  "pomyślnie",
	common:   "i w z na do się twoja twój twoje jest",
	await:    "zatwierdzenie zgody akceptację potwierdzenia czeka",
	articles: "",
}, {
	code: "nl",
	forms: "verwijderd aangemaakt gemaakt toegevoegd bijgewerkt geüpdatet gewijzigd aangepast hernoemd verplaatst " +
		"verzonden verstuurd geannuleerd herstart gestart gestopt uitgerold gedeployed geschaald opgeschaald " +
		"goedgekeurd geboekt terugbetaald gearchiveerd toegewezen gereset ingeschakeld uitgeschakeld samengevoegd " +
		"gemerged gepubliceerd ingetrokken verzet gesloten heropend ingesteld gepauzeerd hervat uitgenodigd " +
		"geblokkeerd gedeblokkeerd gemarkeerd opgeslagen gedeeld geactiveerd gedeactiveerd afgemeld aangemeld " +
		"geleegd teruggedraaid verlengd ingepland geïnstalleerd opgelost toegepast uitgevoerd overgemaakt betaald " +
		"afgezegd gewist doorgestuurd beantwoord vervangen hersteld opgeruimd gekoppeld ontkoppeld geregeld " +
		"opgezegd gereserveerd afgesloten aangezet uitgezet geschrapt gezet gecrediteerd gestuurd",
	first:    "ik we wij heb hebben 'k",
	passive:  "is zijn werd werden geworden nu staat staan",
	negation: "niet niets geen nooit nog zonder",
	modal: "ga gaan zal zullen zou zouden kan kun kunt wil wilt als wanneer zodra voordat moet mag goedkeuring " +
		"bevestig bevestigen keur concept voorbereid wacht wachten",
	read:   "gisteren vorige afgelopen geleden eerder sinds keer keren volgens logs log geschiedenis toont laatst nacht meestal automatisch altijd normaal",
	agent:  "door",
	target: "naar tot voor",
	dates: "januari februari maart april mei juni juli augustus september oktober november december " +
		"maandag dinsdag woensdag donderdag vrijdag zaterdag zondag",
	done:     "klaar|gedaan|geregeld|gelukt|helemaal klaar|alles geregeld",
	softener: "oké ok prima top goed",
	finite:   "zijn is blijven blijft kunnen kan hebben heeft worden wordt",
	breaks:   "maar echter",
	success:  "succesvol",
	common:   "en de het van met je jouw uw naar een",
	await:    "goedkeuring wacht",
	articles: "de het een",
}}

// A lexicon is a language's word lists as sets, built once.
type lexicon struct {
	code                                                        string
	stems, forms                                                set
	past, firstSuffix, impersonal                               []string
	first, passive, negation, modal, read, agent, target, dates set
	finite, breaks, success, softener, await, articles          set
	notPast                                                     []string
	done                                                        [][]string
}

type set map[string]bool

func newSet(words string) set {
	s := make(set)
	for _, w := range strings.Fields(words) {
		s[w] = true
	}
	return s
}

// lexicons are the languages' lists as sets; byForm and byStem index the
// change words across languages.
var (
	lexicons []lexicon
	byForm   = make(map[string][]int) // change word -> languages
	byStem   = make(map[string][]int) // stem -> languages
	// smallWords are the function words of each language (subjects,
	// auxiliaries, negations, prepositions...): guess counts them.
	smallWords = make(map[string][]int)
)

func init() {
	for i, l := range languages {
		x := lexicon{
			code: l.code, stems: newSet(l.stems), forms: newSet(l.forms),
			past: strings.Fields(l.past), firstSuffix: strings.Fields(l.firstSuffix),
			impersonal: strings.Fields(l.impersonal),
			first:      newSet(l.first), passive: newSet(l.passive), negation: newSet(l.negation),
			modal: newSet(l.modal), read: newSet(l.read), agent: newSet(l.agent), target: newSet(l.target),
			dates: newSet(l.dates), finite: newSet(l.finite), breaks: newSet(l.breaks),
			success: newSet(l.success), softener: newSet(l.softener),
			await: newSet(l.await), articles: newSet(l.articles), notPast: strings.Fields(l.notPast),
		}
		for _, d := range strings.Split(l.done, "|") {
			x.done = append(x.done, strings.Fields(d))
		}
		lexicons = append(lexicons, x)
		for f := range x.forms {
			byForm[f] = append(byForm[f], i)
		}
		for s := range x.stems {
			byStem[s] = append(byStem[s], i)
		}
		for _, s := range []set{x.first, x.passive, x.negation, x.modal, x.read, x.agent, x.target, x.finite, x.breaks, x.articles, x.await, newSet(l.common)} {
			for w := range s {
				if !slices.Contains(smallWords[w], i) {
					smallWords[w] = append(smallWords[w], i)
				}
			}
		}
	}
}

func init() {
	for s := range byStem {
		if len(s) > maxStem {
			panic("phantom: stem " + s + " is longer than maxStem")
		}
	}
}
