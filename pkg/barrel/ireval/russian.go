package ireval

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// lexeme is a Russian noun in its case forms: nominative, genitive,
// dative, accusative, instrumental, prepositional, nominative plural.
type lexeme [7]string

var ruNouns = []lexeme{
	{"Москва", "Москвы", "Москве", "Москву", "Москвой", "Москве", "Москвы"},
	{"река", "реки", "реке", "реку", "рекой", "реке", "реки"},
	{"город", "города", "городу", "город", "городом", "городе", "города"},
	{"книга", "книги", "книге", "книгу", "книгой", "книге", "книги"},
	{"школа", "школы", "школе", "школу", "школой", "школе", "школы"},
	{"учитель", "учителя", "учителю", "учителя", "учителем", "учителе", "учителя"},
	{"дорога", "дороги", "дороге", "дорогу", "дорогой", "дороге", "дороги"},
	{"поезд", "поезда", "поезду", "поезд", "поездом", "поезде", "поезда"},
	{"машина", "машины", "машине", "машину", "машиной", "машине", "машины"},
	{"лес", "леса", "лесу", "лес", "лесом", "лесе", "леса"},
	{"окно", "окна", "окну", "окно", "окном", "окне", "окна"},
	{"вода", "воды", "воде", "воду", "водой", "воде", "воды"},
	{"земля", "земли", "земле", "землю", "землёй", "земле", "земли"},
	{"гора", "горы", "горе", "гору", "горой", "горе", "горы"},
	{"море", "моря", "морю", "море", "морем", "море", "моря"},
	{"зима", "зимы", "зиме", "зиму", "зимой", "зиме", "зимы"},
	{"праздник", "праздника", "празднику", "праздник", "праздником", "празднике", "праздники"},
	{"библиотека", "библиотеки", "библиотеке", "библиотеку", "библиотекой", "библиотеке", "библиотеки"},
	{"музей", "музея", "музею", "музей", "музеем", "музее", "музеи"},
	{"театр", "театра", "театру", "театр", "театром", "театре", "театры"},
	{"врач", "врача", "врачу", "врача", "врачом", "враче", "врачи"},
	{"письмо", "письма", "письму", "письмо", "письмом", "письме", "письма"},
	{"сад", "сада", "саду", "сад", "садом", "саде", "сады"},
	{"улица", "улицы", "улице", "улицу", "улицей", "улице", "улицы"},
	{"собака", "собаки", "собаке", "собаку", "собакой", "собаке", "собаки"},
	{"птица", "птицы", "птице", "птицу", "птицей", "птице", "птицы"},
	{"ёлка", "ёлки", "ёлке", "ёлку", "ёлкой", "ёлке", "ёлки"},
	{"мост", "моста", "мосту", "мост", "мостом", "мосте", "мосты"},
	{"площадь", "площади", "площади", "площадь", "площадью", "площади", "площади"},
	{"автобус", "автобуса", "автобусу", "автобус", "автобусом", "автобусе", "автобусы"},
}

// Sentence frames, one per case form: %s is the noun.
var ruFrames = [7][]string{
	{"%s стоит на месте.", "Вот %s, о которой все говорят.", "Это %s."},
	{"Мы ждали у %s.", "Возле %s было тихо.", "Нет %s."},
	{"Мы пошли к %s.", "Письмо пришло к %s.", "Подарок дали %s."},
	{"Я видел %s вчера.", "Мы нашли %s утром.", "Они любят %s."},
	{"Мы гуляли с %s.", "Рядом с %s был дом.", "Он доволен %s."},
	{"Мы говорили о %s.", "Он думал о %s.", "Много писали о %s."},
	{"Все %s красивые.", "Новые %s появились.", "Старые %s остались."},
}

// Filler sentences that name none of the nouns.
var ruFiller = []string{
	"Погода была хорошая.", "Вечером все разошлись по домам.", "Было много людей.",
	"Никто не знал, что будет дальше.", "Днём светило солнце.", "Всё прошло спокойно.",
	"Об этом рассказали на следующий день.", "Люди долго не расходились.",
}

// RussianPage is a generated page.
type RussianPage struct {
	Path, Title, Body string
}

// RussianSet generates Russian pages and judged queries on them: each of
// 30 nouns is the subject of pagesPerNoun pages that name it in oblique
// forms (and, on one in six, the nominative), among filler sentences and a
// mention of another noun. A query is a noun in the nominative; its
// relevant pages are those whose subject it is. Without stemming only the
// pages that happen to hold the nominative match, so the set measures
// what morphology brings. The same seed gives the same set.
func RussianSet(seed uint64, pagesPerNoun int) ([]RussianPage, []Query) {
	rng := rand.New(rand.NewPCG(seed, 0x72757373))
	var pages []RussianPage
	var queries []Query
	for ni, n := range ruNouns {
		q := Query{Text: strings.ToLower(n[0])}
		for p := range pagesPerNoun {
			var sb strings.Builder
			forms := rng.Perm(6)[:3]
			for i := range forms {
				forms[i]++ // oblique cases and the plural
			}
			if rng.IntN(6) == 0 {
				forms = append(forms, 0) // a few pages name it plainly too
			}
			for _, f := range forms {
				fr := ruFrames[f][rng.IntN(len(ruFrames[f]))]
				fmt.Fprintf(&sb, "<p>"+fr+" %s</p>\n", n[f], ruFiller[rng.IntN(len(ruFiller))])
			}
			other := ruNouns[(ni+1+rng.IntN(len(ruNouns)-1))%len(ruNouns)]
			fmt.Fprintf(&sb, "<p>"+ruFrames[5][0]+"</p>\n", other[5])
			path := fmt.Sprintf("ru/%02d-%d.html", ni, p)
			pages = append(pages, RussianPage{Path: path, Title: fmt.Sprintf("Заметка %d", ni*pagesPerNoun+p+1), Body: sb.String()})
			q.Relevant = append(q.Relevant, path)
		}
		queries = append(queries, q)
	}
	return pages, queries
}

// HTML is the page as a UTF-8 HTML document.
func (p RussianPage) HTML() string {
	return "<html><head><meta charset=\"utf-8\"><title>" + p.Title + "</title></head><body>\n" + p.Body + "</body></html>\n"
}
