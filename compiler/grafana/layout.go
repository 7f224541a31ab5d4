package grafana

// gridWidth is the width of Grafana's dashboard grid.
const gridWidth = 24

// grid places panels left to right and wraps to a new line when a panel no
// longer fits, so gridPos never needs hand-written coordinates. It also hands
// out panel ids, unique within the dashboard.
type grid struct {
	items  []any
	nextID int
	x, y   int
	lineH  int
}

// row starts a new line with an expanded row header.
func (g *grid) row(title string) {
	g.newLine()
	g.nextID++
	g.items = append(g.items, row{
		Type:    "row",
		ID:      g.nextID,
		Title:   title,
		GridPos: gridPos{H: 1, W: gridWidth, X: 0, Y: g.y},
		Panels:  []panel{},
	})
	g.y++
}

// add places p with width w and height h.
func (g *grid) add(p panel, w, h int) {
	if g.x+w > gridWidth {
		g.newLine()
	}
	g.nextID++
	p.ID = g.nextID
	p.GridPos = gridPos{H: h, W: w, X: g.x, Y: g.y}
	g.items = append(g.items, p)
	g.x += w
	if h > g.lineH {
		g.lineH = h
	}
}

func (g *grid) newLine() {
	g.y += g.lineH
	g.x, g.lineH = 0, 0
}
